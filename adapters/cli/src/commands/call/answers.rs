//! How `mcpwire call` answers the server's requests: elicitations from `--answer`,
//! `--answer-defaults`, or asked on a terminal (declined otherwise); sampling with
//! `--sampling-answer` (declined otherwise).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::core::jsonrpc::{ErrorObject, RawJson};
use mcpwire::{ElicitAction, ElicitResult, ElicitationRequest, Handlers};
use serde_json::{json, Map, Value};

use super::ask;
use super::stdin_lines::PromptInput;
use crate::exit_codes;
use crate::failure::Failure;

/// What the command line says about answering.
pub(crate) struct AnswerArgs<'a> {
    /// `--answer JSON`.
    pub answer: Option<&'a str>,
    /// `--answer-defaults`.
    pub defaults: bool,
    /// `--sampling-answer TEXT`.
    pub sampling: Option<&'a str>,
}

/// One prompt at a time on the terminal.
static TERMINAL: Mutex<()> = Mutex::new(());

/// Whether an `--answer` did not fit the form it was to answer (the command then fails).
static ANSWER_MISFIT: AtomicBool = AtomicBool::new(false);

/// Whether an `--answer` did not fit the form it was to answer.
pub(crate) fn answer_misfit() -> bool {
    ANSWER_MISFIT.load(Ordering::SeqCst)
}

/// The notification a server sends when a url-mode elicitation is done.
pub(crate) const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// The ids of the url-mode elicitations the server said are complete.
static COMPLETED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Notes a `notifications/elicitation/complete` (its params as received).
pub(crate) fn elicitation_completed(params: Option<&RawJson>) {
    let id = params.and_then(|p| p.parse::<Value>().ok()).and_then(|p| {
        p.get("elicitationId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    if let Some(id) = id {
        COMPLETED.lock().unwrap_or_else(|e| e.into_inner()).push(id);
    }
}

/// Waits until the server says the elicitation `id` is complete.
async fn completion(id: &str) {
    loop {
        if COMPLETED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|done| done == id)
        {
            return;
        }
        smol::Timer::after(Duration::from_millis(100)).await;
    }
}

/// Shows a url-mode elicitation's URL (never opened here) and waits for Enter, or for the
/// server's completion notification when the request has an `elicitationId`.
async fn url_on_terminal(req: ElicitationRequest, url: String) -> ElicitResult {
    let id = req
        .params
        .get("elicitationId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let message = req.message().to_owned();
    // Given up when the server says the step is done: the line typed next is the next
    // prompt's, not this one's.
    let given_up = Arc::new(AtomicBool::new(false));
    let mut input = PromptInput::new(given_up.clone());
    // Not under the terminal's lock: given up, this read waits on until the next line comes.
    let typed = smol::unblock(move || {
        let mut out = crate::output::stderr_writer();
        ask::url(&message, &url, &mut input, &mut out)
    });
    let done = async {
        match id {
            Some(id) => {
                completion(&id).await;
                given_up.store(true, Ordering::SeqCst);
                errln!("\nthe server says the elicitation is complete");
                Ok(ElicitResult {
                    meta: None,
                    action: ElicitAction::Accept,
                    content: None,
                })
            }
            None => std::future::pending().await,
        }
    };
    futures_lite::future::or(typed, done)
        .await
        .unwrap_or(ElicitResult {
            meta: None,
            action: ElicitAction::Cancel,
            content: None,
        })
}

/// Asks an elicitation on the terminal (stdin for the answers, stderr for the questions), on a
/// thread of its own since reading blocks.
async fn ask_on_terminal(req: ElicitationRequest) -> ElicitResult {
    if let ("url", Some(url)) = (req.mode(), req.url()) {
        let url = url.to_owned();
        return url_on_terminal(req, url).await;
    }
    let answered = smol::unblock(move || {
        let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
        let mut input = PromptInput::new(Arc::new(AtomicBool::new(false)));
        let mut out = crate::output::stderr_writer();
        let schema = req.requested_schema().cloned().unwrap_or(json!({}));
        ask::form(req.message(), &schema, &req.fields(), &mut input, &mut out)
    })
    .await;
    answered.unwrap_or(ElicitResult {
        meta: None,
        action: ElicitAction::Cancel,
        content: None,
    })
}

/// The handlers for `mcpwire call`.
pub(crate) fn handlers(args: AnswerArgs<'_>) -> Result<Handlers, Failure> {
    let content: Option<Map<String, Value>> = match args.answer {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| {
            Failure::new(
                exit_codes::USAGE,
                format!("--answer must be a JSON object: {e}"),
            )
        })?),
        None => None,
    };
    let content = Arc::new(content);
    let defaults = args.defaults;
    let interactive = std::io::stdin().is_terminal() && crate::output::stderr_is_terminal();
    let handlers = Handlers::new().on_elicitation(move |req| {
        let content = content.clone();
        async move {
            // Not over a progress bar.
            crate::output::make_room();
            if let Some(content) = content.as_ref() {
                // Checked as the form would check it typed, before anything is sent.
                let schema = req.requested_schema().cloned().unwrap_or(json!({}));
                let content = match ask::check(&schema, &req.fields(), content) {
                    Ok(content) => content,
                    Err(problems) => {
                        errln!(
                            "elicitation: {} → --answer does not fit the form (cancelled):",
                            req.message()
                        );
                        for problem in &problems {
                            errln!("  {problem}");
                        }
                        ANSWER_MISFIT.store(true, Ordering::SeqCst);
                        return Ok(ElicitResult {
                            meta: None,
                            action: ElicitAction::Cancel,
                            content: None,
                        });
                    }
                };
                errln!("elicitation: {} → answered from --answer", req.message());
                return Ok(ElicitResult {
                    meta: None,
                    action: ElicitAction::Accept,
                    content: Some(content),
                });
            }
            if defaults {
                let answer = req.answer_with_defaults();
                errln!(
                    "elicitation: {} → {}",
                    req.message(),
                    match answer.action {
                        ElicitAction::Accept => "answered from the schema's defaults",
                        _ => "declined: a required field has no default",
                    }
                );
                return Ok(answer);
            }
            if interactive {
                return Ok(ask_on_terminal(req).await);
            }
            errln!(
                "elicitation: {} → declined (answer with --answer JSON or --answer-defaults)",
                req.message()
            );
            Ok(ElicitResult::decline())
        }
    });
    // Url mode is asked on a terminal only: there is nothing to fill from flags.
    let handlers = match interactive && args.answer.is_none() && !defaults {
        true => handlers.with_url_elicitation(),
        false => handlers,
    };
    let text = Arc::new(args.sampling.map(str::to_owned));
    Ok(handlers.on_sampling_json(move |params| {
        let text = text.clone();
        async move {
            crate::output::make_room();
            sample(text.as_deref(), &params)
        }
    }))
}

/// The answer to `sampling/createMessage`: `text` as the assistant's message, or a refusal
/// saying how to answer.
fn sample(text: Option<&str>, params: &Value) -> Result<Value, ErrorObject> {
    let asked = params
        .pointer("/messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.pointer("/content/text"))
        .and_then(Value::as_str)
        .unwrap_or("a message");
    match text {
        Some(text) => {
            errln!("sampling: {asked} → answered from --sampling-answer");
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": "mcpwire-cli",
                "stopReason": "endTurn",
            }))
        }
        None => {
            errln!("sampling: {asked} → declined (answer with --sampling-answer TEXT)");
            Err(ErrorObject::new(
                -1,
                "the user declined the sampling request (mcpwire answers with --sampling-answer TEXT)",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_notification_ends_the_wait() {
        let params = RawJson::from_string(r#"{"elicitationId":"e-1"}"#.into()).unwrap();
        elicitation_completed(Some(&params));
        let waited = smol::block_on(futures_lite::future::or(
            async {
                completion("e-1").await;
                true
            },
            async {
                smol::Timer::after(Duration::from_secs(5)).await;
                false
            },
        ));
        assert!(waited);
    }

    #[test]
    fn sampling_is_answered_with_the_text_or_declined() {
        let params =
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]});
        let r = sample(Some("hello"), &params).unwrap();
        assert_eq!(r["content"]["text"], "hello");
        assert_eq!(r["model"], "mcpwire-cli");
        assert_eq!(r["role"], "assistant");
        let e = sample(None, &params).unwrap_err();
        assert!(e.message.contains("--sampling-answer"));
    }
}
