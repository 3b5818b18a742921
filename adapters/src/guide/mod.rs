//! Guides: how to do each thing a host does with mcpwire, one page each, from a first program
//! to embedding the sans-IO core. Their examples are compiled as doctests.
//!
//! - [Getting started](getting_started), on smol and on tokio
//! - [Servers over stdio](stdio): lifecycle, environment, the close
//! - [HTTP](http): TLS, proxies, HTTP/2, the pool, sessions, resumption
//! - [The two eras and detection](eras)
//! - [Errors and at most once](errors): the error table, `MaybeExecuted`, `reissue`, timeouts
//! - [Handlers](handlers): sampling, elicitation, roots
//! - [Many servers with the Manager](manager)
//! - [Hosts' configuration files](hosts)
//! - [OAuth](oauth): sign-in, stores, the extensions
//! - [Tasks, Skills, Apps](tasks_skills_apps)
//! - [Observability](observability)
//! - [Embedding the sans-IO core in your own loop](core_loop)
//! - [Testing your host](testing)

#[doc = include_str!("../../docs/getting_started.md")]
pub mod getting_started {}

#[doc = include_str!("../../docs/stdio.md")]
pub mod stdio {}

#[doc = include_str!("../../docs/http.md")]
pub mod http {}

#[doc = include_str!("../../docs/eras.md")]
pub mod eras {}

#[doc = include_str!("../../docs/errors.md")]
pub mod errors {}

#[doc = include_str!("../../docs/handlers.md")]
pub mod handlers {}

#[doc = include_str!("../../docs/manager.md")]
pub mod manager {}

#[doc = include_str!("../../docs/hosts.md")]
pub mod hosts {}

#[doc = include_str!("../../docs/oauth.md")]
pub mod oauth {}

#[doc = include_str!("../../docs/tasks_skills_apps.md")]
pub mod tasks_skills_apps {}

#[doc = include_str!("../../docs/observability.md")]
pub mod observability {}

#[doc = include_str!("../../docs/core_loop.md")]
pub mod core_loop {}

#[doc = include_str!("../../docs/testing.md")]
pub mod testing {}
