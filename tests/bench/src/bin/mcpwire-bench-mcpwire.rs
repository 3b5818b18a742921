//! One client measurement with the mcpwire implementations (and the isahc floor, which links
//! only what mcpwire's HTTP backend does) (the runner's choice: this binary
//! links no other client, so its resident memory is its own).

fn main() {
    // The tracing-cost comparison's subscriber, when it names one.
    mcpwire_bench::tracing_cost::install();
    mcpwire_bench::client_binary(|args| match args.imp {
        mcpwire_bench::Impl::IsahcFloor => mcpwire_bench::isahc_floor::run(args),
        _ => mcpwire_bench::mcpwire_client::run(args),
    })
}
