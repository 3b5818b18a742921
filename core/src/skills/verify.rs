//! The verification of a skill's files against its entry: size and SHA-256 digest of every file
//! read, the `SKILL.md` frontmatter compared field by field. Any mismatch is a [`SkillError`]
//! naming what differed, and the content is not given out.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::entry::{Skill, SkillResource, SKILL_MD};
use super::frontmatter;
use crate::types::ReadResourceResult;

/// Why a skill is rejected. Nothing of a rejected skill is used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The entry's `resources` is `"dynamic"`: there is nothing to verify the files against.
    #[error("skill {uri}: its files are \"dynamic\", with no digests to verify them against")]
    Dynamic {
        /// The skill's `SKILL.md` URI.
        uri: String,
    },
    /// The entry breaks the extension's rules (its URI, its name, its file list).
    #[error("skill {uri}: invalid entry: {reason}")]
    InvalidEntry {
        /// The skill's `SKILL.md` URI.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// A file read is not one the entry lists: an unlisted file is a change to the skill.
    #[error("{uri}: not a file the skill's entry lists")]
    NotListed {
        /// The file.
        uri: String,
    },
    /// The `resources/read` result holds no content for the file.
    #[error("{uri}: the read returned no content for this URI")]
    NoContent {
        /// The file.
        uri: String,
    },
    /// The `resources/read` result's content is not text or valid base64.
    #[error("{uri}: the read's content is unreadable: {reason}")]
    BadContent {
        /// The file.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// The file's size is not the entry's.
    #[error("{uri}: {actual} bytes read, the entry says {expected}")]
    SizeMismatch {
        /// The file.
        uri: String,
        /// The entry's size.
        expected: u64,
        /// The size read.
        actual: u64,
    },
    /// The file's SHA-256 digest is not the entry's.
    #[error("{uri}: digest {actual}, the entry says {expected}")]
    DigestMismatch {
        /// The file.
        uri: String,
        /// The entry's digest.
        expected: String,
        /// The digest of the bytes read.
        actual: String,
    },
    /// The `SKILL.md` read has no frontmatter block.
    #[error("{uri}: no `---` frontmatter block at its start")]
    NoFrontmatter {
        /// The `SKILL.md`.
        uri: String,
    },
    /// The `SKILL.md` read is not UTF-8 text.
    #[error("{uri}: not UTF-8 text")]
    NotText {
        /// The `SKILL.md`.
        uri: String,
    },
    /// The `SKILL.md` frontmatter could not be read.
    #[error("{uri}: {error}")]
    BadFrontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// Where and why.
        error: frontmatter::FrontmatterError,
    },
    /// The `SKILL.md` frontmatter differs from the entry's.
    #[error("{uri}: the frontmatter differs from the entry's: {}", list(.fields))]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// Each field that differs.
        fields: Vec<FieldDiff>,
    },
    /// A file the entry lists was not among the reads given.
    #[error("{uri}: listed by the entry, not read")]
    Missing {
        /// The file.
        uri: String,
    },
    /// No skill the server lists has that name, path or URI.
    #[error("no skill named `{name}`")]
    NotFound {
        /// The name asked for.
        name: String,
    },
    /// Several skills the server lists have that name: ask for one by its path or URI.
    #[error("several skills are named `{name}`: {}", .uris.join(", "))]
    Ambiguous {
        /// The name asked for.
        name: String,
        /// The `SKILL.md` URIs of the skills of that name.
        uris: Vec<String>,
    },
}

/// One frontmatter field that differs: its value in the file and in the entry (`None`: absent).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDiff {
    /// The field.
    pub field: String,
    /// Its value in the `SKILL.md` read.
    pub file: Option<Value>,
    /// Its value in the entry.
    pub entry: Option<Value>,
}

impl std::fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Value>| v.as_ref().map_or("absent".into(), Value::to_string);
        let (file, entry) = (show(&self.file), show(&self.entry));
        write!(f, "{} (file: {file}; entry: {entry})", self.field)
    }
}

fn list(fields: &[FieldDiff]) -> String {
    let parts: Vec<String> = fields.iter().map(FieldDiff::to_string).collect();
    parts.join(", ")
}

/// One verified file of a skill: its bytes matched the entry's size and digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// The MIME type the read gave, if any.
    pub mime_type: Option<String>,
    /// The file's bytes (a text content's UTF-8, a blob decoded).
    pub bytes: Vec<u8>,
}

impl SkillFile {
    /// The file as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The file's path within the skill (`references/FORMS.md`), given the skill's entry.
    pub fn path_in<'a>(&'a self, skill: &Skill) -> &'a str {
        skill
            .root()
            .and_then(|root| self.uri.strip_prefix(root))
            .unwrap_or(&self.uri)
    }
}

/// A skill whose every file was read and verified.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedSkill {
    /// The entry the files were verified against.
    pub entry: Skill,
    /// The files, in the entry's order; the `SKILL.md` among them.
    pub files: Vec<SkillFile>,
}

impl VerifiedSkill {
    /// The skill's `SKILL.md`.
    pub fn skill_md(&self) -> Option<&SkillFile> {
        self.files.iter().find(|f| f.uri == self.entry.uri)
    }
}

/// A loaded skill: the entry it was loaded from, held while acting on it, and its verified
/// `SKILL.md`. Its other files are read when needed, each verified against the same entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    /// The entry held.
    pub entry: Skill,
    /// The verified `SKILL.md`.
    pub skill_md: SkillFile,
}

impl LoadedSkill {
    /// Loads a skill from its entry and the `resources/read` result of its `SKILL.md`
    /// ([`verify_skill_md`]).
    pub fn new(entry: Skill, read: &ReadResourceResult) -> Result<Self, SkillError> {
        let skill_md = verify_skill_md(&entry, read)?;
        Ok(LoadedSkill { entry, skill_md })
    }

    /// The URI of a file of the skill: `path` relative to the skill's root
    /// (`references/FORMS.md`), or a URI as it is.
    pub fn resolve(&self, path: &str) -> String {
        match self.entry.root() {
            Some(root) if !path.contains("://") => {
                format!("{root}{}", path.trim_start_matches('/'))
            }
            _ => path.to_owned(),
        }
    }

    /// Verifies a file of the skill read with `resources/read` ([`verify_file`]).
    pub fn verify(&self, uri: &str, read: &ReadResourceResult) -> Result<SkillFile, SkillError> {
        verify_file(&self.entry, uri, read)
    }

    /// The files of the skill other than its `SKILL.md`, in the entry's order.
    pub fn other_files(&self) -> impl Iterator<Item = &SkillResource> {
        let md = self.entry.uri.as_str();
        self.entry
            .files()
            .unwrap_or(&[])
            .iter()
            .filter(move |f| f.uri != md)
    }
}

/// `sha256:{hex}` of `bytes`, as skill entries carry it.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from_digit(u32::from(b >> 4), 16).expect("a hex digit"));
        out.push(char::from_digit(u32::from(b & 15), 16).expect("a hex digit"));
    }
    out
}

impl Skill {
    /// Checks the entry before anything is read: its files are listed (not `"dynamic"`), its
    /// URI ends in `/SKILL.md` and its final path segment is the frontmatter's `name`, a
    /// non-empty `description` is there, the `SKILL.md` is listed, every file lies under the
    /// skill's root, once, with a well-formed digest. Gives the files.
    pub fn check(&self) -> Result<&[SkillResource], SkillError> {
        let invalid = |reason: String| SkillError::InvalidEntry {
            uri: self.uri.clone(),
            reason,
        };
        let Some(files) = self.files() else {
            return Err(SkillError::Dynamic {
                uri: self.uri.clone(),
            });
        };
        let (Some(path), Some(root)) = (self.path(), self.root()) else {
            return Err(invalid(format!("its URI does not end in /{SKILL_MD}")));
        };
        let name = self
            .name()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| invalid("its frontmatter has no name".into()))?;
        if path.rsplit('/').next() != Some(name) {
            return Err(invalid(format!(
                "its URI's last segment is not its name `{name}`"
            )));
        }
        if self.description().is_none_or(str::is_empty) {
            return Err(invalid("its frontmatter has no description".into()));
        }
        let mut seen = std::collections::HashSet::new();
        for file in files {
            if !seen.insert(file.uri.as_str()) {
                return Err(invalid(format!("{} is listed twice", file.uri)));
            }
            let inside = file.uri.strip_prefix(root).is_some_and(|rest| {
                !rest.is_empty() && !rest.split('/').any(|s| matches!(s, "" | "." | ".."))
            });
            if !inside {
                return Err(invalid(format!("{} lies outside the skill", file.uri)));
            }
            if !well_formed(&file.digest) {
                let (uri, digest) = (&file.uri, &file.digest);
                return Err(invalid(format!(
                    "{uri} has the malformed digest {digest:?}"
                )));
            }
        }
        if !seen.contains(self.uri.as_str()) {
            return Err(invalid(format!("its files do not list its {SKILL_MD}")));
        }
        Ok(files)
    }
}

/// `sha256:` and 64 lowercase hex digits.
fn well_formed(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Verifies one file of `skill` read with `resources/read`: it must be listed, and its bytes
/// must have the entry's size and digest (the size is checked first). The entry is checked
/// too ([`Skill::check`]).
pub fn verify_file(
    skill: &Skill,
    uri: &str,
    read: &ReadResourceResult,
) -> Result<SkillFile, SkillError> {
    let files = skill.check()?;
    let listed = files
        .iter()
        .find(|f| f.uri == uri)
        .ok_or_else(|| SkillError::NotListed { uri: uri.into() })?;
    let (bytes, mime_type) = content(uri, read)?;
    let actual = bytes.len() as u64;
    if actual != listed.size {
        return Err(SkillError::SizeMismatch {
            uri: uri.into(),
            expected: listed.size,
            actual,
        });
    }
    let digest = digest_of(&bytes);
    if digest != listed.digest {
        return Err(SkillError::DigestMismatch {
            uri: uri.into(),
            expected: listed.digest.clone(),
            actual: digest,
        });
    }
    Ok(SkillFile {
        uri: uri.into(),
        mime_type,
        bytes,
    })
}

/// Verifies the skill's `SKILL.md` read with `resources/read`: as [`verify_file`], then its
/// frontmatter parsed and compared field by field with the entry's.
pub fn verify_skill_md(skill: &Skill, read: &ReadResourceResult) -> Result<SkillFile, SkillError> {
    let file = verify_file(skill, &skill.uri, read)?;
    let uri = || skill.uri.clone();
    let text = file
        .text()
        .ok_or_else(|| SkillError::NotText { uri: uri() })?;
    let (block, _body) =
        frontmatter::split(text).ok_or_else(|| SkillError::NoFrontmatter { uri: uri() })?;
    let parsed = frontmatter::parse(block)
        .map_err(|error| SkillError::BadFrontmatter { uri: uri(), error })?;
    let fields = compare(&parsed, &skill.frontmatter);
    if !fields.is_empty() {
        return Err(SkillError::FrontmatterMismatch { uri: uri(), fields });
    }
    Ok(file)
}

/// Verifies a whole skill from its reads (each file's URI with its `resources/read` result):
/// the `SKILL.md` first, then every other listed file, in the entry's order. Every listed file
/// must be among the reads, and every read must be of a listed file.
pub fn verify_skill<'a>(
    skill: &Skill,
    reads: impl IntoIterator<Item = (&'a str, &'a ReadResourceResult)>,
) -> Result<VerifiedSkill, SkillError> {
    let files = skill.check()?;
    let reads: Vec<(&str, &ReadResourceResult)> = reads.into_iter().collect();
    if let Some((uri, _)) = reads
        .iter()
        .find(|(u, _)| !files.iter().any(|f| f.uri == *u))
    {
        return Err(SkillError::NotListed { uri: (*uri).into() });
    }
    let read_of = |uri: &str| {
        reads
            .iter()
            .find(|(u, _)| *u == uri)
            .map(|(_, r)| *r)
            .ok_or_else(|| SkillError::Missing { uri: uri.into() })
    };
    let skill_md = verify_skill_md(skill, read_of(&skill.uri)?)?;
    let mut verified = Vec::with_capacity(files.len());
    for file in files {
        if file.uri == skill.uri {
            verified.push(skill_md.clone());
        } else {
            verified.push(verify_file(skill, &file.uri, read_of(&file.uri)?)?);
        }
    }
    Ok(VerifiedSkill {
        entry: skill.clone(),
        files: verified,
    })
}

/// The bytes and MIME type of the content for `uri` in a read result: the item whose `uri` is
/// `uri` (or the only item, when it names no URI); `text` as UTF-8, `blob` base64-decoded.
fn content(uri: &str, read: &ReadResourceResult) -> Result<(Vec<u8>, Option<String>), SkillError> {
    let matching: Vec<&Value> = read
        .contents
        .iter()
        .filter(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .collect();
    let item = match (matching.as_slice(), read.contents.as_slice()) {
        ([one], _) => *one,
        ([], [only]) if only.get("uri").is_none() => only,
        ([], _) => return Err(SkillError::NoContent { uri: uri.into() }),
        _ => {
            return Err(SkillError::BadContent {
                uri: uri.into(),
                reason: "several contents for this URI".into(),
            })
        }
    };
    let mime = item
        .get("mimeType")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let bad = |reason: &str| SkillError::BadContent {
        uri: uri.into(),
        reason: reason.into(),
    };
    match (item.get("text"), item.get("blob")) {
        (Some(Value::String(text)), None) => Ok((text.as_bytes().to_vec(), mime)),
        (None, Some(Value::String(blob))) => STANDARD
            .decode(blob)
            .map(|bytes| (bytes, mime))
            .map_err(|_| bad("its blob is not base64")),
        _ => Err(bad("neither one text nor one blob")),
    }
}

/// The fields that differ between the file's frontmatter and the entry's, in name order.
fn compare(file: &Map<String, Value>, entry: &Map<String, Value>) -> Vec<FieldDiff> {
    let mut names: Vec<&String> = file.keys().chain(entry.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|k| match (file.get(*k), entry.get(*k)) {
            (Some(a), Some(b)) => !same(a, b),
            _ => true,
        })
        .map(|k| FieldDiff {
            field: k.clone(),
            file: file.get(k).cloned(),
            entry: entry.get(k).cloned(),
        })
        .collect()
}

/// Equal as JSON values, numbers by value (`1` and `1.0` are the same number).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64()) {
            (Some(i), Some(j), _) => i == j,
            (None, None, Some(u)) => y.as_u64() == Some(u),
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
