//! Each host's dialect: the variable forms it expands, and the fields of a server entry it
//! expands them in (hosts.md §1.1 and §1.3).

use super::expand::Forms;
use crate::hosts::host::Host;

/// The fields a host may expand variables in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Command,
    Args,
    Env,
    EnvFile,
    Cwd,
    Url,
    Headers,
}

impl Field {
    /// The name the printable form of this field is kept under.
    pub(crate) fn shown_name(self) -> &'static str {
        match self {
            Field::Command => "command",
            Field::Args => "args",
            Field::Env => "env",
            Field::EnvFile => "envFile",
            Field::Cwd => "cwd",
            Field::Url => "url",
            Field::Headers => "headers",
        }
    }
}

/// How one host's format expands variables.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    pub host: Host,
    pub forms: Forms,
    /// The fields whose values it expands variables in (when it has any form).
    pub fields: &'static [Field],
}

impl Rules {
    /// Whether the host expands variables in `field`.
    pub(crate) fn expands(&self, field: Field) -> bool {
        self.forms.any() && self.fields.contains(&field)
    }
}

use Field::*;

/// Each host's variable forms and the fields it expands them in (hosts.md §1.1 and §1.3).
pub(crate) fn rules(host: Host) -> Rules {
    const NONE: &[Field] = &[];
    let (forms, fields): (Forms, &'static [Field]) = match host {
        Host::ClaudeDesktop | Host::Zed | Host::Codex | Host::Inspector => (Forms::NONE, NONE),
        // code.claude.com/docs/en/mcp: `${VAR}` and `${VAR:-default}` in five fields.
        Host::ClaudeCode => (
            Forms {
                braced: true,
                default: true,
                ..Forms::NONE
            },
            &[Command, Args, Env, Url, Headers],
        ),
        // Cursor's docs: `${env:NAME}`, `${userHome}`, `${workspaceFolder}` (and VS Code's
        // `${workspaceFolderBasename}`, `${pathSeparator}`) in the same five fields.
        Host::Cursor => (
            Forms {
                env_prefix: true,
                user_home: true,
                workspace: true,
                separator: true,
                ..Forms::NONE
            },
            &[Command, Args, Env, Url, Headers],
        ),
        // VS Code resolves its variables in the whole server definition.
        Host::VsCode => (
            Forms {
                env_prefix: true,
                user_home: true,
                workspace: true,
                separator: true,
                input: true,
                ..Forms::NONE
            },
            &[Command, Args, Env, EnvFile, Cwd, Url, Headers],
        ),
        // Windsurf: `${env:VAR}` and `${file:path}` in command, args, env, serverUrl, url, headers.
        Host::Windsurf => (
            Forms {
                env_prefix: true,
                file: true,
                ..Forms::NONE
            },
            &[Command, Args, Env, Url, Headers],
        ),
        // Gemini CLI resolves `$VAR`, `${VAR}` (and, in current versions, `${VAR:-default}`)
        // in every string of its settings file.
        Host::Gemini => (
            Forms {
                braced: true,
                bare: true,
                default: true,
                ..Forms::NONE
            },
            &[Command, Args, Env, Cwd, Url, Headers],
        ),
        // The generic dialect of hosts.md §1.3 (the Copilot format documents no rule of its own).
        Host::Copilot | Host::Generic => (
            Forms {
                braced: true,
                default: true,
                env_prefix: true,
                user_home: true,
                workspace: true,
                file: true,
                ..Forms::NONE
            },
            &[Command, Args, Env, EnvFile, Cwd, Url, Headers],
        ),
    };
    Rules {
        host,
        forms,
        fields,
    }
}
