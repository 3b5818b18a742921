//! One client measurement with mcpwire in a tokio host (`mcpwire-tokio`, `mcpwire-tokio-ct`)
//! only (the runner's choice: this binary links no other client, so its resident memory is its
//! own: mcpwire's and tokio's).

fn main() {
    mcpwire_bench::client_binary(mcpwire_bench::mcpwire_client::run_tokio)
}
