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
    /// The fields among those where a bare `$VAR` is expanded too (when `forms.bare`);
    /// elsewhere a `$word` is text.
    pub bare_fields: &'static [Field],
}

impl Rules {
    /// Whether the host expands variables in `field`.
    pub(crate) fn expands(&self, field: Field) -> bool {
        self.forms.any() && self.fields.contains(&field)
    }

    /// The forms expanded in `field`.
    pub(crate) fn forms_in(&self, field: Field) -> Forms {
        Forms {
            bare: self.forms.bare && self.bare_fields.contains(&field),
            ..self.forms
        }
    }
}

use Field::*;

/// Each host's variable forms and the fields it expands them in (hosts.md §1.1 and §1.3).
pub(crate) fn rules(host: Host) -> Rules {
    const NONE: &[Field] = &[];
    let bare_fields: &'static [Field] = match host {
        // Gemini's documentation names `$VAR_NAME` for `env` values only (hosts.md §1.1,
        // §1.3): a `$word` anywhere else (a shell snippet in `args`, a `$` in a header) is
        // text, not an unset variable.
        Host::Gemini => &[Env],
        _ => NONE,
    };
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
        // Gemini CLI resolves `${VAR}` (and, in current versions, `${VAR:-default}`) in the
        // strings of its settings file, and `$VAR` in `env` values (`bare_fields` above).
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
        bare_fields,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_expands_a_bare_dollar_word_in_env_values_only() {
        let gemini = rules(Host::Gemini);
        assert!(gemini.forms_in(Env).bare);
        for field in [Command, Args, Cwd, Url, Headers] {
            assert!(!gemini.forms_in(field).bare, "{field:?}");
            assert!(
                gemini.forms_in(field).braced,
                "{field:?} still expands ${{VAR}}"
            );
        }
    }
}
