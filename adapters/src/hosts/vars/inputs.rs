//! VS Code's `inputs`: values the user is asked for (`${input:id}`), through a callback the
//! host program supplies. Each is asked once per loader, whichever server needs it first.

use std::collections::BTreeMap;
use std::fmt;

use super::expand::Problem;

/// Asks the user for an input's value; an `Err` says why none was given (cancelled, no
/// terminal). The value is treated as a secret: it is never printed.
pub type InputCallback = Box<dyn FnMut(&InputSpec) -> Result<String, String> + Send>;

/// An input a file declares (VS Code `inputs[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputSpec {
    /// Its id, as `${input:id}` names it.
    pub id: String,
    /// Its type: `promptString` (free text) or `pickString` (one of `options`).
    pub kind: String,
    /// What to show the user.
    pub description: Option<String>,
    /// Whether what is typed must be hidden.
    pub password: bool,
    /// The proposed value.
    pub default: Option<String>,
    /// The choices of a `pickString`.
    pub options: Vec<String>,
}

impl InputSpec {
    /// A `promptString` input with this id and description.
    pub fn prompt(id: impl Into<String>, description: impl Into<String>) -> InputSpec {
        InputSpec {
            id: id.into(),
            kind: "promptString".into(),
            description: Some(description.into()),
            password: false,
            default: None,
            options: Vec::new(),
        }
    }
}

/// The callback, the answers given so far and the inputs the current file declares.
#[derive(Default)]
pub(crate) struct Inputs {
    pub(crate) callback: Option<InputCallback>,
    answers: BTreeMap<String, String>,
    declared: BTreeMap<String, InputSpec>,
}

impl fmt::Debug for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inputs")
            .field("callback", &self.callback.is_some())
            .field("answered", &self.answers.keys().collect::<Vec<_>>())
            .field("declared", &self.declared.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Inputs {
    /// Declares the inputs of the file about to be read (none for formats without them).
    pub(crate) fn declare(&mut self, specs: Vec<InputSpec>) {
        self.declared = specs.into_iter().map(|s| (s.id.clone(), s)).collect();
    }

    /// Forgets every answer.
    pub(crate) fn forget(&mut self) {
        self.answers.clear();
    }

    /// The value of input `id`, asked for if not yet answered.
    pub(crate) fn value(&mut self, id: &str) -> Result<String, Problem> {
        if let Some(v) = self.answers.get(id) {
            return Ok(v.clone());
        }
        let spec = self
            .declared
            .get(id)
            .ok_or_else(|| Problem::UnknownInput(id.to_owned()))?;
        let callback = self
            .callback
            .as_mut()
            .ok_or_else(|| Problem::InputNeeded(id.to_owned()))?;
        let value = callback(spec).map_err(|reason| Problem::InputFailed {
            id: id.to_owned(),
            reason,
        })?;
        self.answers.insert(id.to_owned(), value.clone());
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn each_input_is_asked_once_and_only_when_declared() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let mut inputs = Inputs {
            callback: Some(Box::new(move |spec: &InputSpec| {
                seen.lock().unwrap().push(spec.id.clone());
                Ok(format!("value-of-{}", spec.id))
            })),
            ..Inputs::default()
        };
        inputs.declare(vec![InputSpec::prompt("token", "Token")]);
        assert_eq!(inputs.value("token").unwrap(), "value-of-token");
        assert_eq!(inputs.value("token").unwrap(), "value-of-token");
        assert_eq!(*asked.lock().unwrap(), ["token"]);
        assert!(matches!(
            inputs.value("other"),
            Err(Problem::UnknownInput(id)) if id == "other"
        ));
        inputs.forget();
        inputs.value("token").unwrap();
        assert_eq!(asked.lock().unwrap().len(), 2);
    }

    #[test]
    fn without_a_callback_an_input_is_an_error() {
        let mut inputs = Inputs::default();
        inputs.declare(vec![InputSpec::prompt("token", "Token")]);
        assert!(matches!(
            inputs.value("token"),
            Err(Problem::InputNeeded(_))
        ));
    }
}
