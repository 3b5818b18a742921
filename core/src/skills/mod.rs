//! Skills over MCP (SEP-2640, the `io.modelcontextprotocol/skills` extension): the typed
//! `skills/list` and `skills/get` results, and (with the `skills` feature) the verification of a
//! skill's files against its entry.
//!
//! A server that declares the extension lists its skills with `skills/list`. Each entry names
//! the skill's `SKILL.md` (`uri`), carries that file's YAML frontmatter as a JSON object, and
//! lists every file of the skill with the SHA-256 digest and the size of its bytes. The files
//! themselves are ordinary resources, read with `resources/read` only when the skill is loaded
//! (never ahead of need). Each file read is checked against its entry (size, then digest), and
//! the frontmatter of the `SKILL.md` read is compared field by field with the entry's: any
//! mismatch rejects the skill, and nothing of it is used.
//!
//! The check is pure: [`Skill::check`] judges an entry before anything is read,
//! [`verify_file`] and [`verify_skill_md`] judge one `resources/read` result, and
//! [`verify_skill`] a whole skill's reads at once. Reading the files is the caller's (the
//! `mcpwire` adapters' `Client::load_skill` and `Client::get_skill`).

mod entry;
pub mod frontmatter;
#[cfg(feature = "skills")]
mod verify;

pub use entry::{
    GetSkillResult, ListSkillsResult, Skill, SkillResource, SkillResources, SKILLS_EXTENSION,
    SKILL_MD,
};
#[cfg(feature = "skills")]
pub use verify::{
    digest_of, verify_file, verify_skill, verify_skill_md, FieldDiff, LoadedSkill, SkillError,
    SkillFile, VerifiedSkill,
};

#[cfg(test)]
mod tests;
