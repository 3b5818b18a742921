//! One client measurement with the mcpwire implementation only (the runner's choice: this binary
//! links no other client, so its resident memory is its own).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match args.first().map(String::as_str) {
        Some("client") => &args[1..],
        _ => &args[..],
    };
    std::process::exit(mcpwire_bench::client_main(
        args,
        mcpwire_bench::mcpwire_client::run,
    ));
}
