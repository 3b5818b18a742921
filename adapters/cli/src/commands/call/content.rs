//! A tool result's content as `mcpwire call` prints it: text as it is, and one line in brackets
//! for each image, audio clip, resource link and embedded resource (its type, size, and with
//! `--output DIR` the file its data was written to).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What the content blocks become: the text to print, or why a block's data could not be
/// written.
pub(crate) fn render(
    blocks: &[Value],
    tool: &str,
    output: Option<&Path>,
) -> Result<String, String> {
    let mut out = String::new();
    for (index, block) in blocks.iter().enumerate() {
        let line = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                out.push_str(text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
                continue;
            }
            Some(kind @ ("image" | "audio")) => {
                let mime = block.get("mimeType").and_then(Value::as_str);
                let data = block
                    .get("data")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let target = output.map(|dir| file_for(dir, tool, index, mime));
                data_line(mime.unwrap_or(kind), data, target.as_deref())?
            }
            Some("resource_link") => {
                let mut parts = vec![format!(
                    "resource link {}",
                    block
                        .get("uri")
                        .and_then(Value::as_str)
                        .unwrap_or("(no uri)")
                )];
                if let Some(mime) = block.get("mimeType").and_then(Value::as_str) {
                    parts.push(mime.to_owned());
                }
                if let Some(size) = block.get("size").and_then(Value::as_u64) {
                    parts.push(human_size(size));
                }
                let name = block
                    .get("title")
                    .or_else(|| block.get("name"))
                    .and_then(Value::as_str);
                if let Some(name) = name {
                    parts.push(format!("{name:?}"));
                }
                format!("[{}]", parts.join(", "))
            }
            Some("resource") => {
                let r = block.get("resource").unwrap_or(&Value::Null);
                let uri = r.get("uri").and_then(Value::as_str).unwrap_or("(no uri)");
                let mime = r.get("mimeType").and_then(Value::as_str);
                match (r.get("text").and_then(Value::as_str), r.get("blob")) {
                    (Some(text), _) => {
                        let mime = mime.map(|m| format!("{m}, ")).unwrap_or_default();
                        let size = human_size(text.len() as u64);
                        format!("[resource {uri}, {mime}{size} of text]")
                    }
                    (None, Some(blob)) => {
                        let blob = blob.as_str().unwrap_or_default();
                        let target = output.map(|dir| file_for(dir, tool, index, mime));
                        let inner = data_line(mime.unwrap_or("blob"), blob, target.as_deref())?;
                        format!("[resource {uri}, {}", &inner[1..])
                    }
                    (None, None) => format!("[resource {uri}]"),
                }
            }
            Some(other) => format!("[{other} content]"),
            None => block.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// `[image/png, 12 KiB]` for base64 `data`; written to `target` (and named) when given.
fn data_line(what: &str, data: &str, target: Option<&Path>) -> Result<String, String> {
    let Some(path) = target else {
        return Ok(match decoded_len(data) {
            Some(n) => format!("[{what}, {}]", human_size(n as u64)),
            None => format!("[{what}, not valid base64]"),
        });
    };
    let Some(bytes) = decode_base64(data) else {
        return Ok(format!("[{what}, not valid base64; not written]"));
    };
    std::fs::write(path, &bytes)
        .map_err(|e| format!("--output: cannot write {}: {e}", path.display()))?;
    Ok(format!(
        "[{what}, {}, written to {}]",
        human_size(bytes.len() as u64),
        path.display()
    ))
}

/// `DIR/<tool>-<index>.<ext>`, the extension from the MIME type.
fn file_for(dir: &Path, tool: &str, index: usize, mime: Option<&str>) -> PathBuf {
    let tool: String = tool
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect();
    let tool = tool.trim_start_matches('.');
    let tool = if tool.is_empty() { "tool" } else { tool };
    dir.join(format!("{tool}-{index}.{}", extension(mime.unwrap_or(""))))
}

/// A file extension for a MIME type (`bin` when it says nothing usable).
pub(crate) fn extension(mime: &str) -> &str {
    let essence = mime.split(';').next().unwrap_or("").trim();
    let known = match essence.to_ascii_lowercase().as_str() {
        "image/jpeg" | "image/jpg" => "jpg",
        "image/svg+xml" => "svg",
        "image/x-icon" | "image/vnd.microsoft.icon" => "ico",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "wav",
        "audio/mp4" | "audio/x-m4a" => "m4a",
        "audio/ogg" | "application/ogg" => "ogg",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "application/octet-stream" => "bin",
        "application/gzip" | "application/x-gzip" => "gz",
        _ => "",
    };
    if !known.is_empty() {
        return known;
    }
    // Otherwise the subtype, when it looks like an extension (png, webp, pdf, json, flac…).
    match essence.split_once('/') {
        Some((_, sub))
            if (1..=8).contains(&sub.len()) && sub.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            sub
        }
        _ => "bin",
    }
}

/// Sizes as people read them: `512 B`, `1.5 KiB`, `12 KiB`, `3.2 MiB`.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 && (value * 10.0).round() % 10.0 != 0.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{} {}", value.round(), UNITS[unit])
    }
}

/// The value of one base64 digit (standard or URL-safe alphabet).
fn digit(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    } as u32)
}

/// How many bytes base64 `data` decodes to, without decoding it (whitespace ignored, padding
/// optional); `None` when it is not base64.
pub(crate) fn decoded_len(data: &str) -> Option<usize> {
    let mut digits = 0usize;
    let mut padding = 0usize;
    for &c in data.as_bytes() {
        match c {
            b'=' => padding += 1,
            c if c.is_ascii_whitespace() => {}
            c if padding == 0 && digit(c).is_some() => digits += 1,
            _ => return None,
        }
    }
    if digits % 4 == 1 || padding > 2 || (padding > 0 && (digits + padding) % 4 != 0) {
        return None;
    }
    Some(digits / 4 * 3 + (digits % 4).saturating_sub(1))
}

/// Decodes base64 `data` (whitespace ignored, padding optional); `None` when it is not base64.
pub(crate) fn decode_base64(data: &str) -> Option<Vec<u8>> {
    let len = decoded_len(data)?;
    let mut out = Vec::with_capacity(len);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in data.as_bytes() {
        let Some(v) = digit(c) else {
            continue; // whitespace and padding, checked above
        };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    debug_assert_eq!(out.len(), len);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_decodes_with_or_without_padding_and_sizes_match() {
        for (text, bytes) in [
            ("", &b""[..]),
            ("Zg==", b"f"),
            ("Zm8=", b"fo"),
            ("Zm9v", b"foo"),
            ("Zm9vYg", b"foob"),
            ("Zm9vYmE=", b"fooba"),
            ("Zm9v\nYmFy", b"foobar"),
            ("+/+/", &[0xfb, 0xff, 0xbf]),
            ("-_-_", &[0xfb, 0xff, 0xbf]),
        ] {
            assert_eq!(decode_base64(text).as_deref(), Some(bytes), "{text}");
            assert_eq!(decoded_len(text), Some(bytes.len()), "{text}");
        }
        for bad in ["Z", "Zm9vY", "Zg=", "Zg===", "Zm*v", "Zg==Zg=="] {
            assert_eq!(decode_base64(bad), None, "{bad}");
            assert_eq!(decoded_len(bad), None, "{bad}");
        }
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1024), "1 KiB");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(12 * 1024), "12 KiB");
        assert_eq!(human_size(12 * 1024 + 700), "13 KiB");
        assert_eq!(human_size(3 * 1024 * 1024 + 300 * 1024), "3.3 MiB");
        assert_eq!(human_size(5 << 30), "5 GiB");
    }

    #[test]
    fn extensions_from_mime_types() {
        assert_eq!(extension("image/png"), "png");
        assert_eq!(extension("image/jpeg"), "jpg");
        assert_eq!(extension("image/svg+xml"), "svg");
        assert_eq!(extension("audio/mpeg"), "mp3");
        assert_eq!(extension("audio/wav"), "wav");
        assert_eq!(extension("application/pdf"), "pdf");
        assert_eq!(extension("text/plain; charset=utf-8"), "txt");
        assert_eq!(extension("application/vnd.ms-excel"), "bin");
        assert_eq!(extension(""), "bin");
    }

    #[test]
    fn each_block_in_one_line_and_text_as_it_is() {
        let blocks = [
            json!({"type": "text", "text": "ends in a newline\n"}),
            json!({"type": "text", "text": "does not"}),
            json!({"type": "image", "mimeType": "image/png", "data": "A".repeat(16384)}),
            json!({"type": "audio", "mimeType": "audio/wav", "data": "Zm9v"}),
            json!({"type": "image", "data": "@@@"}),
            json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a",
                   "mimeType": "text/plain", "size": 2048}),
            json!({"type": "resource", "resource": {"uri": "demo://readme",
                   "mimeType": "text/plain", "text": "hello"}}),
            json!({"type": "resource", "resource": {"uri": "demo://logo", "blob": "Zm9vYg=="}}),
            json!({"type": "widget"}),
        ];
        assert_eq!(
            render(&blocks, "t", None).unwrap(),
            "ends in a newline
does not
[image/png, 12 KiB]
[audio/wav, 3 B]
[image, not valid base64]
[resource link file:///a.txt, text/plain, 2 KiB, \"a\"]
[resource demo://readme, text/plain, 5 B of text]
[resource demo://logo, blob, 4 B]
[widget content]
"
        );
    }

    #[test]
    fn with_an_output_directory_data_is_written_to_files() {
        let dir = std::env::temp_dir().join(format!("mcpwire-content-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let blocks = [
            json!({"type": "text", "text": "hi"}),
            json!({"type": "image", "mimeType": "image/jpeg", "data": "Zm9v"}),
            json!({"type": "resource", "resource": {"uri": "x:y", "mimeType": "application/pdf",
                   "blob": "YmFy"}}),
        ];
        let text = render(&blocks, "get/pic", Some(&dir)).unwrap();
        let jpg = dir.join("get_pic-1.jpg");
        let pdf = dir.join("get_pic-2.pdf");
        assert_eq!(
            text,
            format!(
                "hi\n[image/jpeg, 3 B, written to {}]\n[resource x:y, application/pdf, 3 B, written to {}]\n",
                jpg.display(),
                pdf.display()
            )
        );
        assert_eq!(std::fs::read(&jpg).unwrap(), b"foo");
        assert_eq!(std::fs::read(&pdf).unwrap(), b"bar");
        let missing = dir.join("no/such/dir");
        let e = render(&blocks, "t", Some(&missing)).unwrap_err();
        assert!(e.starts_with("--output: cannot write"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
