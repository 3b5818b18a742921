//! A skill's entry as `skills/list` and `skills/get` give it: its files, their digests and
//! sizes, and its frontmatter.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The extension's identifier, the key of `capabilities.extensions` a server declares it under.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The name of the file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// One file of a skill: its resource URI, the SHA-256 digest of its bytes (`sha256:` and 64
/// lowercase hex digits) and their number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:{hex}` of the file's raw bytes.
    pub digest: String,
    /// The length of the file's raw bytes.
    pub size: u64,
}

/// A skill's files: every one listed, or `"dynamic"` (generated content, no digests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ResourcesWire", into = "ResourcesWire")]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each once.
    Listed(Vec<SkillResource>),
    /// `"dynamic"`: the content is generated, so nothing can be verified.
    Dynamic,
}

/// The wire form of [`SkillResources`].
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ResourcesWire {
    List(Vec<SkillResource>),
    Word(String),
}

impl TryFrom<ResourcesWire> for SkillResources {
    type Error = String;
    fn try_from(wire: ResourcesWire) -> Result<Self, String> {
        match wire {
            ResourcesWire::List(list) => Ok(SkillResources::Listed(list)),
            ResourcesWire::Word(w) if w == "dynamic" => Ok(SkillResources::Dynamic),
            ResourcesWire::Word(w) => Err(format!("resources is {w:?}, not a list or \"dynamic\"")),
        }
    }
}

impl From<SkillResources> for ResourcesWire {
    fn from(r: SkillResources) -> Self {
        match r {
            SkillResources::Listed(list) => ResourcesWire::List(list),
            SkillResources::Dynamic => ResourcesWire::Word("dynamic".into()),
        }
    }
}

/// The entry of one skill, as `skills/list` and `skills/get` give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter as a JSON object: `name`, `description` and every other
    /// field its author wrote.
    pub frontmatter: Map<String, Value>,
    /// The skill's files.
    pub resources: SkillResources,
    /// Other members (`_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Skill {
    /// The skill's name: its frontmatter's `name`.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The skill's description: its frontmatter's `description`.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The skill's path (`acme/billing/refunds` in `skill://acme/billing/refunds/SKILL.md`):
    /// the URI without its scheme and its `/SKILL.md`. `None` when the URI does not end so.
    pub fn path(&self) -> Option<&str> {
        let after_scheme = self.uri.split_once("://").map_or(&*self.uri, |(_, p)| p);
        after_scheme
            .strip_suffix(SKILL_MD)?
            .strip_suffix('/')
            .filter(|p| !p.is_empty())
    }

    /// The skill's root: its `SKILL.md` URI without `SKILL.md` (ending in `/`); every file of
    /// the skill lies under it.
    pub fn root(&self) -> Option<&str> {
        self.path()?;
        self.uri.strip_suffix(SKILL_MD)
    }

    /// The files listed, when they are listed (not `"dynamic"`).
    pub fn files(&self) -> Option<&[SkillResource]> {
        match &self.resources {
            SkillResources::Listed(list) => Some(list),
            SkillResources::Dynamic => None,
        }
    }

    /// The total size of the files listed.
    pub fn total_size(&self) -> u64 {
        self.files()
            .map_or(0, |f| f.iter().fold(0, |n, r| n.saturating_add(r.size)))
    }

    /// Whether `wanted` names this skill: its `name`, its path, or its `SKILL.md` URI.
    pub fn is_named(&self, wanted: &str) -> bool {
        self.uri == wanted || self.path() == Some(wanted) || self.name() == Some(wanted)
    }
}

/// `skills/list` (over all pages): every skill entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// The skills.
    pub skills: Vec<Skill>,
    /// The cursor of the next page; absent at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members (`ttlMs`, `cacheScope`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `skills/get`: the entry of one skill, named by the URI of its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillResult {
    /// The skill.
    pub skill: Skill,
    /// Other members (`ttlMs`, `cacheScope`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
