/// Fuzz entry point for the SSE decoder (filled in with the decoder).
pub fn sse(_data: &[u8]) {}
