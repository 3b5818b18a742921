//! The fuzz input, read as small values.

/// The largest chunk of bytes one operation feeds.
pub(super) const MAX_CHUNK: usize = 4096;

/// Reads the fuzz input as small values; every read past the end gives `None`.
pub(super) struct Input<'a> {
    pub(super) data: &'a [u8],
}

impl Input<'_> {
    pub(super) fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    pub(super) fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    pub(super) fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }

    /// A chunk length: mostly small, up to [`MAX_CHUNK`].
    pub(super) fn len(&mut self) -> Option<usize> {
        let b = self.byte()?;
        Some(if b < 0xF0 {
            usize::from(b)
        } else {
            usize::from(b - 0xEF) * (MAX_CHUNK / 16)
        })
    }
}
