//! Newline-delimited frames with a size limit: a line over the limit is
//! read through and dropped, never held whole.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One read from a [`LineReader`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line (without its newline) is in the buffer.
    Complete,
    /// A line of this many bytes was over the limit and dropped.
    TooLong(usize),
    /// The stream ended.
    End,
}

/// Reads lines of at most `max` bytes.
pub(crate) struct LineReader<R> {
    inner: R,
    max: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        LineReader { inner, max }
    }

    /// Reads the next line into `line` (cleared first). A last line
    /// without a newline still counts.
    pub(crate) async fn next(&mut self, line: &mut Vec<u8>) -> std::io::Result<Line> {
        line.clear();
        let mut dropped = 0usize;
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(match (dropped, line.is_empty()) {
                    (0, true) => Line::End,
                    (0, false) => Line::Complete,
                    (n, _) => Line::TooLong(n),
                });
            }
            let (chunk, consumed, ended) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (&available[..at], at + 1, true),
                None => (available, available.len(), false),
            };
            if dropped == 0 && line.len() + chunk.len() <= self.max {
                line.extend_from_slice(chunk);
            } else {
                // Over the limit: count it and let the bytes go.
                dropped = dropped.max(line.len()) + chunk.len();
                line.clear();
            }
            self.inner.consume(consumed);
            if ended {
                return Ok(if dropped == 0 {
                    Line::Complete
                } else {
                    Line::TooLong(dropped)
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], max: usize) -> Vec<Result<String, usize>> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(4, input), max);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            match reader.next(&mut line).await.unwrap() {
                Line::Complete => out.push(Ok(String::from_utf8(line.clone()).unwrap())),
                Line::TooLong(n) => out.push(Err(n)),
                Line::End => return out,
            }
        }
    }

    #[tokio::test]
    async fn lines_split_on_newlines_across_buffer_boundaries() {
        assert_eq!(
            all(b"one\ntwo\n\nlast", 100).await,
            [
                Ok("one".into()),
                Ok("two".into()),
                Ok(String::new()),
                Ok("last".into())
            ]
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_dropped_and_the_next_one_read() {
        assert_eq!(
            all(b"0123456789\nok\n0123456789", 5).await,
            [Err(10), Ok("ok".into()), Err(10)]
        );
        // Exactly the limit is fine.
        assert_eq!(all(b"12345\n", 5).await, [Ok("12345".into())]);
    }
}
