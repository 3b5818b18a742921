//! A command against the one server the command line names (`--stdio`, `--http`, `--config`
//! with `--server` or one enabled server, `--server`) or the built-in demo server: the
//! connection's options from the command line and the server's file, the connection, the
//! command, the close.

use futures_lite::future;
use mcpwire::{ConnectOptions, Error, Event};

use crate::command_line::parser::{Cli, Command};
use crate::command_line::server_args::{self, EraArg};
use crate::commands::call::{self, answers, CallRequest};
use crate::commands::{
    auth, complete, info, ping, prompts, resources, skills, tasks, tools, watch,
};
use crate::failure::{message_of, Failure};
use crate::server_logs::{self, set_log_level, LogLevel, LogPrinter};
use crate::{exit_codes, otlp, output, stop, verbose};

pub(crate) mod target;

/// Runs the command against the one server the command line names (or the demo server):
/// connects, runs it, closes the connection gracefully (also after a stop request).
pub(crate) async fn run(cli: Cli) -> Result<u8, Failure> {
    let (config, from_file) = match target::target_config(&cli.server)? {
        Some(found) => found,
        None => (target::server_config(&cli.server)?, None),
    };
    let settings = from_file.as_ref().map(|s| &s.settings);
    let file_era = settings.and_then(|s| s.era);
    // The file's tool filter holds here as in the Manager: its other tools are not shown,
    // nor called.
    let filter = settings.map(|s| s.tools.clone()).unwrap_or_default();
    let server_name = from_file.as_ref().map(|s| s.name.clone());
    // The file's timeouts for its server, unless --timeout says otherwise.
    let given = cli.server.timeout.is_some();
    let timeout = server_args::timeout(&cli.server)?;
    let init_timeout = match settings.and_then(|s| s.startup_timeout) {
        Some(t) if !given => t,
        _ => timeout,
    };
    let timeout = match settings.and_then(|s| s.tool_timeout) {
        Some(t) if !given => t,
        _ => timeout,
    };
    let mut options = ConnectOptions {
        init_timeout,
        // The era probe gets a third of the start's budget (10 s of the default 30), so that a
        // longer --timeout, or a file's startup timeout, is also more time for a server that is
        // slow to start before it can answer the probe.
        probe_timeout: init_timeout / 3,
        era: match cli.server.era {
            // The file's `protocolEra`, unless --era says otherwise.
            EraArg::Auto => file_era.unwrap_or(mcpwire::Era::Auto),
            EraArg::Handshake => mcpwire::Era::Handshake,
            EraArg::Stateless => mcpwire::Era::Stateless,
        },
        // A server from a file is named as the file may be shown: no secret of its.
        shown_as: from_file.as_ref().map(|s| s.target()),
        ..ConnectOptions::default()
    };
    cli.server.http_client.apply(&mut options)?;
    let login =
        matches!(&cli.command, Command::Auth(a) if matches!(a.command, auth::AuthCommand::Login));
    if login {
        auth::forget(&config)?;
    }
    let file_oauth = settings.and_then(|s| s.oauth.as_ref());
    auth::apply(
        &cli.server.sign_in,
        &config,
        file_oauth,
        &mut options,
        login,
    )?;
    verbose::cap_messages(&mut options, cli.server.max_message_size);
    if cli.server.verbose {
        verbose::observe(&mut options, None);
    }
    otlp::trace_context(&mut options, cli.server.verbose, None);
    if let Command::Call {
        answer,
        answer_defaults,
        sampling_answer,
        ..
    } = &cli.command
    {
        // On a terminal, elicitations are asked; without one, declined unless answered.
        options.handlers = answers::handlers(answers::AnswerArgs {
            answer: answer.as_deref(),
            defaults: *answer_defaults,
            sampling: sampling_answer.as_deref(),
        })?;
    }
    let stateless = matches!(cli.server.era, EraArg::Stateless);
    let http_proxy = info::proxy_in_use(&config, &options);
    // From here on a stop request (or stdout's loss) closes the connection gracefully.
    stop::stop_gracefully();
    let (client, driver) = mcpwire::connect(&config, options)?;
    smol::spawn(driver).detach();
    // `auth login`'s sign-in takes Ctrl-C itself, as its typed outcome.
    let ready = match login {
        true => Ok(client.ready().await),
        false => stop::unless_stopped(client.ready(), |_| ()).await,
    };
    let ready = match ready {
        Ok(Ok(_)) => Ok(()),
        // Pinned to the stateless era, a server that refuses server/discover speaks another.
        Ok(Err(e @ Error::Handshake { .. })) if stateless => Err(Failure::new(
            exit_codes::CONNECT,
            format!(
                "this server does not speak 2026-07-28; try --era auto ({})",
                message_of(&e)
            ),
        )),
        Ok(Err(e)) => {
            let mut f = Failure::from(e);
            // A sign-in cancelled by a stop request.
            if let Some(request) = stop::requested() {
                f.code = request.code();
            }
            Err(f)
        }
        Err(stop) => {
            stop::tell(&stop);
            Err(stop::stopped(&stop))
        }
    };
    if let Err(f) = ready {
        // As on every other path: a stdio server gets stdin's end, then SIGTERM, then SIGKILL.
        client.close().await;
        return Err(f);
    }
    // With --verbose, what the connection reports beside the frames: readiness and the era,
    // every diagnostic, session renewals, the close. A call that runs as a task tells its
    // task's status as it changes, verbose or not.
    let verbose = cli.server.verbose;
    let calling = matches!(cli.command, Command::Call { .. });
    let printer = (verbose || calling).then(|| {
        let mut events = client.events();
        smol::spawn(async move {
            while let Some(event) = events.next().await {
                let task = matches!(event, Event::TaskStatus { .. });
                if let Some(line) = describe(&event).filter(|_| verbose || task) {
                    errln!("· {line}");
                }
            }
        })
    });
    let min_level = cli.server.log_level.unwrap_or(LogLevel::Info);
    let logs = LogPrinter::new(&client, min_level, output::stderr_is_terminal());
    let watching = matches!(cli.command, Command::Watch(_));
    let log_level = cli.server.log_level;
    let work = async {
        if let Some(level) = log_level {
            set_log_level(&client, level, timeout).await;
        }
        match cli.command {
            Command::Info { json } => {
                let asked_http2 = cli.server.http_client.asks_http2();
                info::info(&client, json, http_proxy.as_deref(), asked_http2)
            }
            Command::Tools { name, json } => {
                let shown = tools::ToolsShown {
                    filter: &filter,
                    name: name.as_deref(),
                    json,
                    config: &config,
                };
                tools::tools(&client, shown, timeout).await
            }
            Command::Call {
                tool,
                args,
                json,
                output,
                ..
            } => {
                let request = CallRequest {
                    tool: &tool,
                    args: &args,
                    json,
                    output: output.as_deref(),
                    filter: &filter,
                    server: server_name.as_deref(),
                    config: Some(&config),
                };
                let max_time = server_args::max_time(&cli.server)?;
                call::call(&client, request, &logs, timeout, max_time).await
            }
            Command::Resources(a) => resources::resources(&client, a, timeout).await,
            Command::Prompts(a) => prompts::prompts(&client, a, timeout).await,
            Command::Skills(a) => skills::skills(&client, a, timeout).await,
            Command::Ping { json } => ping::ping(&client, json, timeout).await,
            Command::Complete(a) => complete::complete(&client, a, timeout).await,
            Command::LogLevel { level, json } => {
                server_logs::log_level(&client, level, json, timeout).await
            }
            Command::Watch(a) => watch::run(&client, a, min_level, timeout).await,
            Command::Auth(_) => auth::logged_in(&config),
            Command::Tasks(a) => tasks::tasks(&client, a, timeout).await,
            Command::Demo
            | Command::ServeDemo { .. }
            | Command::Decode(_)
            | Command::Servers { .. }
            | Command::Completions { .. } => {
                unreachable!("handled before connecting")
            }
        }
    };
    // A call cut short by a stop request tells the server why ("interrupted").
    let named = |request: stop::Request| client.set_cancel_reason(request.words());
    // The server's log messages are printed while the command runs, and those left after.
    // Watch reads the notifications itself, log messages included.
    let done = match watching {
        true => stop::unless_stopped(work, named).await,
        false => stop::unless_stopped(future::or(work, logs.run()), named).await,
    };
    // A call cut short by a stop request was dropped with the work: its cancellation is queued, and
    // goes out before the close's end of stdin.
    let code = match done {
        Ok(code) => code,
        // Watch runs until Ctrl-C: that is its normal end.
        Err(stop::Stop::Requested(stop::Request::Interrupt)) if watching => {
            errln!("interrupted; closing the connection");
            Ok(exit_codes::OK)
        }
        Err(stop) => {
            stop::tell(&stop);
            Err(stop::stopped(&stop))
        }
    };
    client.close().await;
    logs.drain().await;
    if let Some(printer) = printer {
        printer.await;
    }
    match code {
        Ok(_) if answers::answer_misfit() => Err(Failure::new(
            exit_codes::USAGE,
            "--answer does not fit the form the server asked for (see above)",
        )),
        code => code,
    }
}

/// One line for `--verbose` about an event of the connection.
fn describe(event: &Event) -> Option<String> {
    Some(match event {
        Event::Ready { era, server } => format!(
            "ready: {era} era, protocol {}, server {} {}",
            server.protocol_version, server.server_info.name, server.server_info.version
        ),
        Event::HandshakeFailed(e) => format!("handshake failed: {e}"),
        Event::SessionRenewed(_) => "the server forgot the session; a new one was made".into(),
        Event::ServerRequestCancelled { id, .. } => {
            format!("the server cancelled its request {id}")
        }
        Event::Diagnostic(d) => format!("diagnostic: {d}"),
        // Told as it happens, before the new process's frames (see `process_step`).
        Event::Restarting { .. } => return None,
        Event::TaskStatus { status, .. } => match &status.message {
            Some(m) => format!("task {}: {} ({m})", status.task_id, status.status),
            None => format!("task {}: {}", status.task_id, status.status),
        },
        Event::Closed(closed) => format!("closed: {}", closed.reason),
        _ => return None,
    })
}
