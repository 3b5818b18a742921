//! One role of the many-servers workload (`mcpwire_bench::many`): one JSON line. It links
//! mcpwire and no other client, so the host's resident memory is mcpwire's own.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(mcpwire_bench::many::main(&args))
}
