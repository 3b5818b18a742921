//! Finding a byte in a few bytes at once, eight at a time in a `u64`, without the set-up of a
//! vector search: the line scans of both codecs (JSONL looks for LF, SSE for CR or LF) on small
//! pushes and short lines.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Up to eight bytes as a little-endian word, zeros above them (so a zero byte is never a byte
/// sought). Loads that may overlap, rather than a copy into a buffer, which the load after it
/// would wait for.
#[inline]
pub(crate) fn load_le(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    if n == 8 {
        u64::from_le_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        ])
    } else if n >= 4 {
        let lo = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let hi = u32::from_le_bytes([bytes[n - 4], bytes[n - 3], bytes[n - 2], bytes[n - 1]]);
        u64::from(lo) | (u64::from(hi) << ((n - 4) * 8))
    } else if n >= 2 {
        let lo = u16::from_le_bytes([bytes[0], bytes[1]]);
        let hi = u16::from_le_bytes([bytes[n - 2], bytes[n - 1]]);
        u64::from(lo) | (u64::from(hi) << ((n - 2) * 8))
    } else {
        bytes.first().map_or(0, |&b| u64::from(b))
    }
}

/// Marks the bytes of `word` equal to `byte`. `(x - ONES) & !x & HIGHS` marks every zero byte of
/// `x`; it may also mark bytes above a zero byte (a borrow), never below the first one, so the
/// lowest mark is exact.
#[inline(always)]
fn marks(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The index of the first `byte` in a little-endian word.
#[inline]
pub(crate) fn first_byte(word: u64, byte: u8) -> Option<usize> {
    let m = marks(word, byte);
    (m != 0).then(|| m.trailing_zeros() as usize / 8)
}

/// The index of the first `a` or `b` in a little-endian word.
#[inline]
pub(crate) fn first_of_two(word: u64, a: u8, b: u8) -> Option<usize> {
    let m = marks(word, a) | marks(word, b);
    (m != 0).then(|| m.trailing_zeros() as usize / 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_byte_sought_at_every_position_and_length() {
        for len in 0..=8 {
            for at in 0..len {
                let mut bytes = vec![b'a'; len];
                bytes[at] = b'\n';
                if at + 1 < len {
                    bytes[at + 1] = b'\r';
                }
                let word = load_le(&bytes);
                assert_eq!(first_byte(word, b'\n'), Some(at));
                assert_eq!(first_of_two(word, b'\r', b'\n'), Some(at));
            }
            let word = load_le(&vec![0xFF; len]);
            assert_eq!(first_byte(word, b'\n'), None);
            assert_eq!(first_of_two(word, b'\n', b'\r'), None);
        }
    }
}
