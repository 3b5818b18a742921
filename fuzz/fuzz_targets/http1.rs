#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpwire_core::fuzzing::http1(data));
