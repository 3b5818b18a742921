//! The YAML frontmatter of a `SKILL.md`, read into JSON values.
//!
//! Agent Skills frontmatter is a small YAML mapping: plain, quoted and block scalars, nested
//! mappings (`metadata`), block and flow sequences. This reader covers that subset with YAML
//! 1.2 core-schema typing (`null`, booleans, integers, floats, strings). What it does not cover
//! (anchors, aliases, tags, multi-line quoted strings, nested flow collections) is an error,
//! never a guess: a frontmatter that cannot be read is a skill that is not loaded.

use serde_json::{Map, Number, Value};

/// Why a frontmatter block could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line} of the frontmatter: {reason}")]
pub struct FrontmatterError {
    /// The line of the block (1 is the line after the opening `---`).
    pub line: usize,
    /// What is wrong there.
    pub reason: String,
}

/// Splits a `SKILL.md` into its frontmatter block and its body: the text must begin (after an
/// optional byte-order mark) with a `---` line, and the block ends at the next `---` line
/// (trailing blanks allowed). `None` when there is no such block.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" {
            let block = rest[..at].trim_end_matches(['\n', '\r']);
            return Some((block, &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

/// Reads a frontmatter block (without its `---` lines) as a JSON object.
pub fn parse(block: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let lines: Vec<Line<'_>> = block
        .lines()
        .enumerate()
        .map(|(i, raw)| Line::new(i + 1, raw))
        .collect();
    if let Some(tab) = lines.iter().find(|l| l.tab_indent) {
        return Err(err(tab.number, "indentation with a tab"));
    }
    let mut p = Parser { lines, pos: 0 };
    p.skip_blank();
    if p.pos == p.lines.len() {
        return Ok(Map::new());
    }
    let indent = p.lines[p.pos].indent;
    if indent != 0 {
        return Err(err(p.lines[p.pos].number, "the block begins indented"));
    }
    let map = p.mapping(0)?;
    p.skip_blank();
    if let Some(line) = p.lines.get(p.pos) {
        return Err(err(line.number, "unexpected text after the mapping"));
    }
    Ok(map)
}

/// One line: its number, its indentation (spaces) and its text after the indentation.
#[derive(Debug, Clone)]
struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
    tab_indent: bool,
}

impl<'a> Line<'a> {
    fn new(number: usize, raw: &'a str) -> Self {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let text = raw.trim_start_matches(' ');
        let indent = raw.len() - text.len();
        let tab_indent = text.starts_with('\t') && !text.trim().is_empty();
        Line {
            number,
            indent,
            text,
            tab_indent,
        }
    }

    /// Blank, or a comment alone.
    fn is_blank(&self) -> bool {
        let t = self.text.trim();
        t.is_empty() || t.starts_with('#')
    }

    /// A block sequence item (`- x`, or `-` alone).
    fn is_item(&self) -> bool {
        self.text == "-" || self.text.starts_with("- ") || self.text.starts_with("-\t")
    }
}

fn err(line: usize, reason: impl Into<String>) -> FrontmatterError {
    FrontmatterError {
        line,
        reason: reason.into(),
    }
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn skip_blank(&mut self) {
        while self.lines.get(self.pos).is_some_and(Line::is_blank) {
            self.pos += 1;
        }
    }

    /// The next non-blank line, without taking it.
    fn peek(&mut self) -> Option<&Line<'a>> {
        self.skip_blank();
        self.lines.get(self.pos)
    }

    /// A block mapping whose keys sit at column `indent`.
    fn mapping(&mut self, indent: usize) -> Result<Map<String, Value>, FrontmatterError> {
        let mut map = Map::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            let (number, text) = (line.number, line.text);
            if line.indent > indent {
                return Err(err(number, "unexpected indentation"));
            }
            if line.is_item() {
                return Err(err(number, "a sequence item where a key was expected"));
            }
            let (key, rest) =
                split_key(text).ok_or_else(|| err(number, "expected `key: value`"))?;
            let key = key.map_err(|reason| err(number, reason))?;
            self.pos += 1;
            let value = self.value(rest, indent, number)?;
            if map.insert(key.clone(), value).is_some() {
                return Err(err(number, format!("the key `{key}` appears twice")));
            }
        }
        Ok(map)
    }

    /// A block sequence whose `-` sit at column `indent`.
    fn sequence(&mut self, indent: usize) -> Result<Vec<Value>, FrontmatterError> {
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent != indent || !line.is_item() {
                if line.indent > indent {
                    return Err(err(line.number, "unexpected indentation"));
                }
                break;
            }
            let number = line.number;
            let after = &line.text[1..];
            let rest = after.trim_start_matches([' ', '\t']);
            let column = indent + 1 + (after.len() - rest.len());
            let starts_flat = rest.starts_with(['"', '\'', '[', '{']);
            if !starts_flat && split_key(rest).is_some() && !rest.starts_with('#') {
                // `- key: value`: a mapping whose first key is on the item's line.
                self.lines[self.pos].indent = column;
                self.lines[self.pos].text = rest;
                items.push(Value::Object(self.mapping(column)?));
            } else {
                self.pos += 1;
                items.push(self.value(rest, indent, number)?);
            }
        }
        Ok(items)
    }

    /// The value after `key:` (or `-`) whose line sits at `indent`: `rest` is the text after
    /// the colon.
    fn value(
        &mut self,
        rest: &str,
        indent: usize,
        number: usize,
    ) -> Result<Value, FrontmatterError> {
        let rest = rest.trim_matches([' ', '\t']);
        if rest.is_empty() || rest.starts_with('#') {
            return match self.peek() {
                Some(next) if next.indent > indent && next.is_item() => {
                    let at = next.indent;
                    self.sequence(at).map(Value::Array)
                }
                // A plain value that begins on the next line.
                Some(next) if next.indent > indent && split_key(next.text).is_none() => {
                    let (text, number) = (next.text, next.number);
                    self.pos += 1;
                    self.value(text, indent, number)
                }
                Some(next) if next.indent > indent => {
                    let at = next.indent;
                    self.mapping(at).map(Value::Object)
                }
                // YAML lets a mapping's sequence sit at the key's own column.
                Some(next) if next.indent == indent && next.is_item() => {
                    self.sequence(indent).map(Value::Array)
                }
                _ => Ok(Value::Null),
            };
        }
        match rest.as_bytes()[0] {
            b'|' | b'>' => self.block_scalar(rest, indent, number).map(Value::String),
            b'"' | b'\'' => {
                let (s, tail) = quoted(rest).map_err(|r| err(number, r))?;
                trailing(tail, number)?;
                Ok(Value::String(s))
            }
            b'[' => flow_sequence(rest).map_err(|r| err(number, r)),
            b'{' => flow_mapping(rest).map_err(|r| err(number, r)),
            b'&' | b'*' | b'!' => Err(err(number, "anchors, aliases and tags are not read")),
            b'@' | b'`' => Err(err(number, "a plain value may not begin with @ or `")),
            _ => {
                let mut text = strip_comment(rest).to_owned();
                // Continuation lines, more indented than the key, fold into one line.
                let mut blank_run = 0;
                while let Some(line) = self.lines.get(self.pos) {
                    if line.text.trim().is_empty() {
                        blank_run += 1;
                        self.pos += 1;
                        continue;
                    }
                    if line.indent <= indent || line.text.starts_with('#') {
                        break;
                    }
                    let part = strip_comment(line.text.trim_end());
                    if blank_run > 0 {
                        text.push_str(&"\n".repeat(blank_run));
                    } else {
                        text.push(' ');
                    }
                    text.push_str(part);
                    blank_run = 0;
                    self.pos += 1;
                }
                if blank_run > 0 {
                    // Step back over the blank lines, which belong to no one.
                    self.pos -= blank_run;
                }
                if text.contains(": ") || text.ends_with(':') {
                    return Err(err(number, "a plain value may not contain `: `"));
                }
                plain(&text).map_err(|r| err(number, r))
            }
        }
    }

    /// A `|` or `>` scalar, with its chomping (`-`, `+`) and indentation (`1`–`9`) indicators.
    fn block_scalar(
        &mut self,
        header: &str,
        indent: usize,
        number: usize,
    ) -> Result<String, FrontmatterError> {
        let folded = header.starts_with('>');
        let indicators = strip_comment(&header[1..]).trim_end();
        let (mut chomp, mut explicit) = ('c', None);
        for c in indicators.chars() {
            match c {
                '-' | '+' if chomp == 'c' => chomp = c,
                '1'..='9' if explicit.is_none() => explicit = c.to_digit(10),
                _ => return Err(err(number, "a block scalar header holds only - + and 1-9")),
            }
        }
        let start = self.pos;
        let mut end = start;
        let mut content_indent = explicit.map(|n| indent + n as usize);
        while let Some(line) = self.lines.get(end) {
            let blank = line.text.trim().is_empty();
            if !blank {
                let at = *content_indent.get_or_insert(line.indent);
                if line.indent < at || line.indent <= indent {
                    break;
                }
            }
            end += 1;
        }
        self.pos = end;
        let at = content_indent.unwrap_or(indent + 1);
        // Lines more indented than the content keep their extra spaces.
        let body: Vec<String> = self.lines[start..end]
            .iter()
            .map(|l| match l.text.trim().is_empty() {
                true => String::new(),
                false => format!("{}{}", " ".repeat(l.indent - at), l.text),
            })
            .collect();
        let mut out = String::new();
        let mut previous_text = false;
        for (i, line) in body.iter().enumerate() {
            let line = line.as_str();
            let more = line.starts_with([' ', '\t']);
            if i > 0 {
                // Folding: a break between two text lines is a space; the break before blank
                // lines is dropped (each blank line is a break of its own).
                let next_text = || {
                    let rest = body[i..].iter().find(|l| !l.is_empty());
                    rest.is_some_and(|l| !l.starts_with([' ', '\t']))
                };
                match (folded && previous_text, line.is_empty(), more) {
                    (true, false, false) => out.push(' '),
                    (true, true, _) if next_text() => {}
                    _ => out.push('\n'),
                }
            }
            out.push_str(line);
            previous_text = !line.is_empty() && !more;
        }
        let content = out.trim_end_matches('\n').len();
        match chomp {
            '-' => out.truncate(content),
            '+' => {
                if !body.is_empty() {
                    out.push('\n');
                }
            }
            _ => {
                out.truncate(content);
                if content > 0 {
                    out.push('\n');
                }
            }
        }
        Ok(out)
    }
}

/// Splits `key: rest` (or `key:` at the end); the key may be quoted. `None` when the text has
/// no key; `Some((Err, _))` when the key is malformed.
fn split_key(text: &str) -> Option<(Result<String, String>, &str)> {
    if text.starts_with(['"', '\'']) {
        let (key, tail) = match quoted(text) {
            Ok(k) => k,
            Err(_) => return None,
        };
        let rest = tail.trim_start_matches(' ').strip_prefix(':')?;
        return (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some((Ok(key), rest));
    }
    let colon = text
        .match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| matches!(text.as_bytes().get(i + 1), None | Some(b' ' | b'\t')))?;
    let key = text[..colon].trim_end();
    if key.is_empty() || key.contains(" #") || key.starts_with('#') {
        return None;
    }
    let bad = key.starts_with(['[', '{', '&', '*', '!', '?', '|', '>', '%', '@', '`']);
    let key = if bad {
        Err(format!("the key `{key}` is not a plain key"))
    } else {
        Ok(key.to_owned())
    };
    Some((key, &text[colon + 1..]))
}

/// A quoted scalar at the start of `text`, and the text after it.
fn quoted(text: &str) -> Result<(String, &str), String> {
    let mut out = String::new();
    if let Some(body) = text.strip_prefix('\'') {
        let mut chars = body.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|p| p.1) == Some('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Ok((out, &body[i + 1..]));
                }
            } else {
                out.push(c);
            }
        }
        return Err("a quoted value does not end on its line".into());
    }
    let body = &text[1..];
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &body[i + 1..])),
            '\\' => {
                let (_, e) = chars.next().ok_or("a quoted value ends in a backslash")?;
                let hex = |chars: &mut std::str::CharIndices<'_>, n: usize| {
                    let digits: String = chars.by_ref().take(n).map(|(_, c)| c).collect();
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .filter(|_| digits.len() == n)
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("a bad \\{e} escape"))
                };
                out.push(match e {
                    '0' => '\0',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    't' | '\t' => '\t',
                    'n' => '\n',
                    'v' => '\u{b}',
                    'f' => '\u{c}',
                    'r' => '\r',
                    'e' => '\u{1b}',
                    ' ' => ' ',
                    '"' => '"',
                    '/' => '/',
                    '\\' => '\\',
                    'N' => '\u{85}',
                    '_' => '\u{a0}',
                    'L' => '\u{2028}',
                    'P' => '\u{2029}',
                    'x' => hex(&mut chars, 2)?,
                    'u' => hex(&mut chars, 4)?,
                    'U' => hex(&mut chars, 8)?,
                    other => return Err(format!("an unknown escape \\{other}")),
                });
            }
            c => out.push(c),
        }
    }
    Err("a quoted value does not end on its line".into())
}

/// After a quoted value or a flow collection, only a comment may follow.
fn trailing(tail: &str, number: usize) -> Result<(), FrontmatterError> {
    let t = tail.trim_start_matches([' ', '\t']);
    if t.is_empty() || (t.starts_with('#') && tail.len() > t.len()) {
        Ok(())
    } else {
        Err(err(number, "unexpected text after a quoted value"))
    }
}

/// A plain value without its trailing ` # comment`.
fn strip_comment(text: &str) -> &str {
    let cut = text
        .match_indices('#')
        .map(|(i, _)| i)
        .find(|&i| i > 0 && matches!(text.as_bytes()[i - 1], b' ' | b'\t'));
    match cut {
        Some(i) => text[..i].trim_end(),
        None => text,
    }
}

/// `[a, "b", 3]`: one line, scalars only.
fn flow_sequence(text: &str) -> Result<Value, String> {
    let (inner, tail) = flow_body(text, '[', ']')?;
    trailing(tail, 0).map_err(|_| "unexpected text after a flow sequence".to_string())?;
    flow_items(inner)?
        .into_iter()
        .map(|item| flow_scalar(&item))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// `{a: 1, b: "x"}`: one line, scalars only.
fn flow_mapping(text: &str) -> Result<Value, String> {
    let (inner, tail) = flow_body(text, '{', '}')?;
    trailing(tail, 0).map_err(|_| "unexpected text after a flow mapping".to_string())?;
    let mut map = Map::new();
    for item in flow_items(inner)? {
        let (key, rest) = split_key(&item).ok_or("a flow mapping entry without `key: value`")?;
        let key = key?;
        let value = flow_scalar(rest.trim())?;
        if map.insert(key.clone(), value).is_some() {
            return Err(format!("the key `{key}` appears twice"));
        }
    }
    Ok(Value::Object(map))
}

/// The text between `open` and its `close` on the line, and what follows.
fn flow_body(text: &str, open: char, close: char) -> Result<(&str, &str), String> {
    let body = &text[open.len_utf8()..];
    let mut quote = None;
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '[' | '{') => return Err("nested flow collections are not read".into()),
            (None, c) if c == close => return Ok((&body[..i], &body[i + 1..])),
            _ => {}
        }
    }
    Err(format!(
        "a flow collection without its `{close}` on the line"
    ))
}

/// The comma-separated items of a flow collection, trimmed (a trailing comma allowed).
fn flow_items(inner: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (None, ',') => items.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    items.push(current);
    let mut items: Vec<String> = items.into_iter().map(|i| i.trim().to_owned()).collect();
    if items.last().is_some_and(String::is_empty) {
        items.pop();
    }
    if items.iter().any(String::is_empty) {
        return Err("an empty item in a flow collection".into());
    }
    Ok(items)
}

/// One scalar of a flow collection.
fn flow_scalar(item: &str) -> Result<Value, String> {
    if item.starts_with(['"', '\'']) {
        let (s, tail) = quoted(item)?;
        if !tail.trim().is_empty() {
            return Err("unexpected text after a quoted item".into());
        }
        return Ok(Value::String(s));
    }
    plain(item)
}

/// A plain scalar, typed by the YAML 1.2 core schema.
fn plain(text: &str) -> Result<Value, String> {
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "-.inf" | ".nan" | ".NaN" | ".NAN" => {
            return Err(format!("`{text}` has no JSON form"))
        }
        _ => number(text).unwrap_or_else(|| Value::String(text.to_owned())),
    })
}

/// A core-schema integer (decimal, `0x`, `0o`) or float, if `text` is one.
fn number(text: &str) -> Option<Value> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let radix = |prefix: &str, radix: u32| {
        let body = digits.strip_prefix(prefix)?;
        let n = i128::from_str_radix(body, radix).ok()?;
        Some(if negative { -n } else { n })
    };
    let int = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits
            .parse::<i128>()
            .ok()
            .map(|n| if negative { -n } else { n })
    } else {
        radix("0x", 16).or_else(|| radix("0o", 8))
    };
    if let Some(n) = int {
        return Some(match (i64::try_from(n), u64::try_from(n)) {
            (Ok(i), _) => Value::from(i),
            (_, Ok(u)) => Value::from(u),
            _ => Value::Number(Number::from_f64(n as f64)?),
        });
    }
    // [-+]? ( . digits | digits ( . digits? )? ) ( [eE] [-+]? digits )?
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(i) => (&digits[..i], Some(&digits[i + 1..])),
        None => (digits, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(whole)
        && fraction.is_none_or(all_digits)
        && (!whole.is_empty() || fraction.is_some_and(|f| !f.is_empty()));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    if !mantissa_ok || !exponent_ok || (fraction.is_none() && exponent.is_none()) {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    Number::from_f64(value).map(Value::Number)
}
