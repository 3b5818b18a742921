//! The server's log messages (`notifications/message`) on stderr: at `--log-level` or above,
//! dimmed when stderr is a terminal, with control characters made visible (when printed, by
//! the `output` module); asking the server for them (`--log-level`, and the `log-level`
//! command's `logging/setLevel`).

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};
use std::time::Duration;

use mcpwire::core::types::LoggingMessageParams;
use mcpwire::{CallOptions, ChosenEra, Client, Notifications, ServerNotification};
use serde_json::{json, Value};

use crate::exit_codes;
use crate::failure::Failure;
use crate::output;

/// The log levels of MCP (those of syslog), least severe first.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire.
    pub(crate) fn name(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    fn of(name: &str) -> Option<LogLevel> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// The line for one log message, or `None` when it is below `min`. A level this client does
/// not know is shown whatever `min` is.
pub(crate) fn line(message: &LoggingMessageParams, min: LogLevel) -> Option<String> {
    if LogLevel::of(&message.level).is_some_and(|l| l < min) {
        return None;
    }
    let data = match &message.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let logger = message
        .logger
        .as_deref()
        .map(|l| format!("{l}: "))
        .unwrap_or_default();
    Some(format!("[{}] {logger}{data}", message.level))
}

/// Prints the server's log messages as they come, from the task that runs the command (so a
/// call can print the messages that came before its result, first).
pub(crate) struct LogPrinter {
    notifications: RefCell<Notifications>,
    min: LogLevel,
    dim: bool,
}

impl LogPrinter {
    /// A printer of `client`'s log messages at `min` or above.
    pub(crate) fn new(client: &Client, min: LogLevel, dim: bool) -> Self {
        LogPrinter {
            notifications: RefCell::new(client.notifications()),
            min,
            dim,
        }
    }

    /// Borrows the queue only for one poll, so [`drain`](Self::drain) may run while
    /// [`run`](Self::run) waits.
    fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<ServerNotification>> {
        let mut notifications = self.notifications.borrow_mut();
        let next = pin!(notifications.next());
        next.poll(cx)
    }

    fn show(&self, n: ServerNotification) {
        let message = match n {
            ServerNotification::Log(m) => m,
            ServerNotification::ForSubscription { notification, .. } => match *notification {
                ServerNotification::Log(m) => m,
                _ => return,
            },
            // A url-mode elicitation finished: its prompt stops waiting.
            ServerNotification::Other(n)
                if n.method == crate::commands::call::answers::ELICITATION_COMPLETE =>
            {
                crate::commands::call::answers::elicitation_completed(n.params.as_ref());
                return;
            }
            _ => return,
        };
        if let Some(line) = line(&message, self.min) {
            // Its control characters made visible, then dimmed.
            output::errln_dim(&line, self.dim);
        }
    }

    /// Prints messages as they come; never ends (race it with the command).
    pub(crate) async fn run<T>(&self) -> T {
        while let Some(n) = std::future::poll_fn(|cx| self.poll_next(cx)).await {
            self.show(n);
        }
        std::future::pending().await
    }

    /// Prints the messages already received.
    pub(crate) async fn drain(&self) {
        let next =
            || futures_lite::future::poll_once(std::future::poll_fn(|cx| self.poll_next(cx)));
        while let Some(Some(n)) = next().await {
            self.show(n);
        }
    }
}

/// Asks the server for log messages at `level` and above, if it offers logging; a refusal is
/// reported and the command goes on.
pub(crate) async fn set_log_level(client: &Client, level: LogLevel, timeout: Duration) {
    let offered = client
        .server_info()
        .is_some_and(|i| i.capabilities.logging.is_some());
    if !offered {
        return;
    }
    let opts = CallOptions::default().timeout(timeout);
    if let Err(e) = client.set_log_level(level.name(), opts).await {
        errln!("mcpwire: asking for log messages failed: {e}");
    }
}

/// `mcpwire log-level LEVEL`: logging/setLevel.
pub(crate) async fn log_level(
    client: &Client,
    level: LogLevel,
    json: bool,
    timeout: Duration,
) -> Result<u8, Failure> {
    client
        .set_log_level(level.name(), CallOptions::default().timeout(timeout))
        .await?;
    match (json, client.era()) {
        (true, _) => output::json(&json!({"level": level.name()})),
        (false, Some(ChosenEra::Stateless)) => outln!(
            "log level {} asked for by each request of this connection (the stateless era has no logging/setLevel)",
            level.name()
        ),
        (false, _) => outln!("log level set to {}", level.name()),
    }
    Ok(exit_codes::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(level: &str, logger: Option<&str>, data: Value) -> LoggingMessageParams {
        LoggingMessageParams {
            level: level.into(),
            logger: logger.map(Into::into),
            data,
            meta: None,
        }
    }

    #[test]
    fn messages_below_the_level_are_left_out() {
        let m = |level| message(level, None, json!("x"));
        assert_eq!(line(&m("debug"), LogLevel::Info), None);
        assert_eq!(
            line(&m("info"), LogLevel::Info).as_deref(),
            Some("[info] x")
        );
        assert_eq!(
            line(&m("error"), LogLevel::Warning).as_deref(),
            Some("[error] x")
        );
        assert_eq!(line(&m("warning"), LogLevel::Error), None);
        assert!(line(&m("emergency"), LogLevel::Emergency).is_some());
        assert!(line(&m("debug"), LogLevel::Debug).is_some());
        // A level not in the protocol is shown rather than lost.
        assert_eq!(
            line(&m("trace"), LogLevel::Emergency).as_deref(),
            Some("[trace] x")
        );
    }

    #[test]
    fn the_logger_and_data_in_one_line() {
        let m = message("info", Some("db"), json!({"rows": 3}));
        assert_eq!(
            line(&m, LogLevel::Debug).as_deref(),
            Some(r#"[info] db: {"rows":3}"#)
        );
        // A server's escape sequences cannot reach the terminal: the line is printed through
        // the `output` module, which makes them visible.
        let m = message("info", None, json!("red \u{1b}[31mtext\u{7}\nnext"));
        let shown = line(&m, LogLevel::Debug).unwrap();
        assert_eq!(
            crate::output::visible(&shown),
            "[info] red \\x1b[31mtext\\x07\nnext"
        );
    }

    #[test]
    fn levels_are_ordered_and_named_as_on_the_wire() {
        for pair in LogLevel::ALL.windows(2) {
            assert!(pair[0] < pair[1]);
        }
        for l in LogLevel::ALL {
            assert_eq!(LogLevel::of(l.name()), Some(l));
            let parsed = <LogLevel as clap::ValueEnum>::from_str(l.name(), false);
            assert_eq!(parsed, Ok(l));
        }
    }
}
