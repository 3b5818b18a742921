//! `mcpwire-bench run ...` (the runner), `mcpwire-bench client ...` (any implementation) and
//! `mcpwire-bench report FILE` (the tables of a raw results file again).

use mcpwire_bench::{
    client_main, floor, isahc_floor, mcpwire_client, report, rmcp_client, runner, tracing_cost,
    usage, ClientArgs, Impl, Outcome,
};

fn any_client(args: &ClientArgs) -> Result<Outcome, String> {
    match args.imp {
        Impl::Mcpwire | Impl::Mcpwire1t | Impl::McpwireStateless | Impl::McpwireLibcurl => {
            mcpwire_client::run(args)
        }
        Impl::McpwireTokio | Impl::McpwireTokioCt => mcpwire_client::run_tokio(args),
        Impl::Rmcp | Impl::RmcpCt | Impl::RmcpKa => rmcp_client::run(args),
        Impl::Floor => floor::run(args),
        Impl::IsahcFloor => isahc_floor::run(args),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("client") => client_main(&args[1..], any_client),
        Some("run") => runner::main(&args[1..]),
        Some("tracing-cost") => tracing_cost::main(&args[1..]),
        Some("report") if args.len() == 2 => match std::fs::read_to_string(&args[1]) {
            Ok(text) => {
                println!("{}", report::Results::from_jsonl(&text).tables());
                0
            }
            Err(e) => {
                eprintln!("{}: {e}", args[1]);
                1
            }
        },
        _ => usage(),
    };
    std::process::exit(code);
}
