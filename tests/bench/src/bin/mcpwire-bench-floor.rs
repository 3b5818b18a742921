//! One client measurement with the floor implementation only (the runner's choice: this binary
//! links no other client, so its resident memory is its own).

fn main() {
    mcpwire_bench::client_binary(mcpwire_bench::floor::run)
}
