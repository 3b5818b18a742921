//! One client measurement with the rmcp implementation only (the runner's choice: this binary
//! links no other client, so its resident memory is its own).

fn main() {
    mcpwire_bench::client_binary(mcpwire_bench::rmcp_client::run)
}
