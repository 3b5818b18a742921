//! Skills over MCP (SEP-2640) on [`Client`]: the listing, and the loading of a skill with every
//! file it reads verified against the skill's entry.
//!
//! Files are read only when asked for: [`Client::list_skills`] reads none,
//! [`Client::load_skill`] reads the `SKILL.md` alone, [`Client::read_skill_file`] one supporting
//! file, and [`Client::get_skill`] (load, then every file) all of them. A file that does not
//! match its entry, or a `SKILL.md` whose frontmatter differs from the entry's, is
//! [`Error::Skill`] and nothing more of that skill is read.

use mcpwire_core::skills::{GetSkillResult, ListSkillsResult, Skill};
use mcpwire_core::typed_result;
use mcpwire_core::McpCall;

use super::handle::Client;
use crate::error::Error;
use mcpwire_core::CallOptions;

impl Client {
    /// Every skill the server lists (`skills/list` over all pages); no skill file is read.
    /// The server must declare the `io.modelcontextprotocol/skills` extension.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, Error> {
        self.list_skills_with(CallOptions::default()).await
    }

    /// Every skill the server lists, with options (a timeout).
    pub async fn list_skills_with(&self, opts: CallOptions) -> Result<Vec<Skill>, Error> {
        let raw = self.send_call(&opts, McpCall::list_skills()).await?;
        Ok(typed_result::<ListSkillsResult>(&raw, "skills/list")?.skills)
    }

    /// The entry of the skill whose `SKILL.md` is `uri` (`skills/get`), listed or not; no skill
    /// file is read.
    pub async fn skill_entry(&self, uri: &str) -> Result<Skill, Error> {
        self.skill_entry_with(uri, CallOptions::default()).await
    }

    /// The entry of the skill whose `SKILL.md` is `uri`, with options.
    pub async fn skill_entry_with(&self, uri: &str, opts: CallOptions) -> Result<Skill, Error> {
        let raw = self.send_call(&opts, McpCall::get_skill(uri)).await?;
        Ok(typed_result::<GetSkillResult>(&raw, "skills/get")?.skill)
    }
}

#[cfg(feature = "skills")]
mod verified {
    use mcpwire_core::skills::{LoadedSkill, Skill, SkillError, SkillFile, VerifiedSkill};

    use crate::client::handle::Client;
    use crate::error::Error;
    use mcpwire_core::CallOptions;

    impl Client {
        /// The entry of the skill `name`: a `SKILL.md` URI is asked for with `skills/get`; a
        /// name or a skill path (`acme/billing/refunds`) is looked up in the listing, where it
        /// must name one skill.
        pub async fn find_skill(&self, name: &str) -> Result<Skill, Error> {
            self.find_skill_with(name, CallOptions::default()).await
        }

        /// The entry of the skill `name`, with options.
        pub async fn find_skill_with(&self, name: &str, opts: CallOptions) -> Result<Skill, Error> {
            if name.contains("://") {
                return self.skill_entry_with(name, opts).await;
            }
            let mut found: Vec<Skill> = self
                .list_skills_with(opts)
                .await?
                .into_iter()
                .filter(|s| s.is_named(name))
                .collect();
            // A path names one skill even when names collide.
            if found.len() > 1 {
                found.retain(|s| s.path() == Some(name));
            }
            match found.len() {
                1 => Ok(found.remove(0)),
                0 => Err(SkillError::NotFound { name: name.into() }.into()),
                _ => Err(SkillError::Ambiguous {
                    name: name.into(),
                    uris: found.into_iter().map(|s| s.uri).collect(),
                }
                .into()),
            }
        }

        /// Loads the skill `name` (see [`find_skill`](Self::find_skill)): its entry is
        /// checked, then its `SKILL.md` alone is read and verified (size, digest, frontmatter
        /// field by field). Its other files are read later, when needed, with
        /// [`read_skill_file`](Self::read_skill_file).
        pub async fn load_skill(&self, name: &str) -> Result<LoadedSkill, Error> {
            let entry = self.find_skill(name).await?;
            self.load_skill_entry(entry).await
        }

        /// Loads a skill from an entry already held (from [`list_skills`](Self::list_skills)
        /// or [`skill_entry`](Self::skill_entry)): as [`load_skill`](Self::load_skill).
        pub async fn load_skill_entry(&self, entry: Skill) -> Result<LoadedSkill, Error> {
            self.load_with(entry, &CallOptions::default()).await
        }

        /// Reads one file of a loaded skill, by its path in the skill (`references/FORMS.md`)
        /// or its URI, and verifies it against the entry held. A file the entry does not list is
        /// refused before anything is read.
        pub async fn read_skill_file(
            &self,
            skill: &LoadedSkill,
            path: &str,
        ) -> Result<SkillFile, Error> {
            self.read_file_with(skill, path, &CallOptions::default())
                .await
        }

        /// The skill `name` (see [`find_skill`](Self::find_skill)) with every file read and
        /// verified, as [`get_skill_from`](Self::get_skill_from).
        pub async fn get_skill(&self, name: &str) -> Result<VerifiedSkill, Error> {
            self.get_skill_with(name, CallOptions::default()).await
        }

        /// The skill `name` with every file read and verified, each call with these options.
        pub async fn get_skill_with(
            &self,
            name: &str,
            opts: CallOptions,
        ) -> Result<VerifiedSkill, Error> {
            let entry = self.find_skill_with(name, opts.clone()).await?;
            self.get_with(entry, &opts).await
        }

        /// A skill from an entry already held, with every file read and verified: its
        /// `SKILL.md` first (a mismatch there reads nothing more), then each other file in the
        /// entry's order, stopping at the first that does not match.
        pub async fn get_skill_from(&self, entry: Skill) -> Result<VerifiedSkill, Error> {
            self.get_with(entry, &CallOptions::default()).await
        }

        async fn load_with(&self, entry: Skill, opts: &CallOptions) -> Result<LoadedSkill, Error> {
            entry.check()?;
            let read = self.read_resource_with(&entry.uri, opts.clone()).await?;
            Ok(LoadedSkill::new(entry, &read)?)
        }

        async fn read_file_with(
            &self,
            skill: &LoadedSkill,
            path: &str,
            opts: &CallOptions,
        ) -> Result<SkillFile, Error> {
            let uri = skill.resolve(path);
            if uri == skill.entry.uri {
                return Ok(skill.skill_md.clone());
            }
            let files = skill.entry.files().unwrap_or(&[]);
            if !files.iter().any(|f| f.uri == uri) {
                return Err(SkillError::NotListed { uri }.into());
            }
            let read = self.read_resource_with(&uri, opts.clone()).await?;
            Ok(skill.verify(&uri, &read)?)
        }

        async fn get_with(&self, entry: Skill, opts: &CallOptions) -> Result<VerifiedSkill, Error> {
            let loaded = self.load_with(entry, opts).await?;
            let mut files = Vec::new();
            for file in loaded.entry.files().unwrap_or(&[]) {
                files.push(self.read_file_with(&loaded, &file.uri, opts).await?);
            }
            Ok(VerifiedSkill {
                entry: loaded.entry,
                files,
            })
        }
    }
}
