//! Input to a controller, and putting sequenced input back in order.

use std::collections::BTreeMap;
use std::str::FromStr;

use nix::sys::signal::Signal;

use super::ControllerError;

/// A terminal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSize {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

/// Input for [`Controller::send_input`](super::Controller::send_input):
/// bytes, a signal, a terminal size, the end of input, or several together
/// (applied in that order: size, signal, data, end).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControllerInput {
    /// Bytes for the process's stdin or terminal.
    pub data: Option<Vec<u8>>,
    /// A signal name: `SIGINT`, `INT`, `sigterm`...
    pub signal: Option<String>,
    /// A new terminal size.
    pub term_size: Option<TermSize>,
    /// The end of input: a command's stdin is closed; a terminal gets
    /// end-of-file (Ctrl-D).
    pub eof: bool,
}

impl ControllerInput {
    /// Bytes to write.
    pub fn data(bytes: impl Into<Vec<u8>>) -> Self {
        ControllerInput {
            data: Some(bytes.into()),
            ..Self::default()
        }
    }

    /// A signal, by name.
    pub fn signal(name: impl Into<String>) -> Self {
        ControllerInput {
            signal: Some(name.into()),
            ..Self::default()
        }
    }

    /// The end of input.
    pub fn eof() -> Self {
        ControllerInput {
            eof: true,
            ..Self::default()
        }
    }

    /// A terminal size.
    pub fn resize(rows: u16, cols: u16) -> Self {
        ControllerInput {
            term_size: Some(TermSize { rows, cols }),
            ..Self::default()
        }
    }

    /// The signal, parsed.
    pub(crate) fn parsed_signal(&self) -> Result<Option<Signal>, ControllerError> {
        self.signal.as_deref().map(parse_signal).transpose()
    }
}

/// `SIGINT`, `INT`, `sigint`: the signal.
pub(crate) fn parse_signal(name: &str) -> Result<Signal, ControllerError> {
    let upper = name.trim().to_ascii_uppercase();
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    Signal::from_str(&full).map_err(|_| ControllerError::UnknownSignal {
        name: name.to_owned(),
    })
}

/// Why input found no room on its way to the process: the queue is full,
/// or the process is gone.
pub(crate) fn no_room<T>(
    id: &str,
    error: tokio::sync::mpsc::error::TrySendError<T>,
) -> ControllerError {
    match error {
        tokio::sync::mpsc::error::TrySendError::Full(_) => {
            ControllerError::InputBacklogFull { id: id.to_owned() }
        }
        tokio::sync::mpsc::error::TrySendError::Closed(_) => {
            ControllerError::NotRunning { id: id.to_owned() }
        }
    }
}

/// How many inputs may wait for an earlier sequence number.
const MAX_HELD: usize = 1024;

/// Puts sequenced input back in order: numbers start at 1 for each process
/// started; an input ahead of its turn is held until the ones before it
/// come.
#[derive(Debug)]
pub(crate) struct InputSequencer {
    next: u64,
    held: BTreeMap<u64, ControllerInput>,
}

impl InputSequencer {
    pub(crate) fn new() -> Self {
        InputSequencer {
            next: 1,
            held: BTreeMap::new(),
        }
    }

    /// The next sequence number expected.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// Undoes an `accept` whose inputs could not be applied: `first` was
    /// the number expected before it, `ready` what it released. The first
    /// of them (the one just sent) is dropped, to be sent again; the rest
    /// are held again.
    pub(crate) fn rewind(&mut self, first: u64, ready: Vec<ControllerInput>) {
        self.next = first;
        for (offset, input) in (0u64..).zip(ready).skip(1) {
            self.held.insert(first + offset, input);
        }
    }

    /// The inputs ready to apply now, in order.
    pub(crate) fn accept(
        &mut self,
        input: ControllerInput,
        seq: Option<u64>,
        id: &str,
    ) -> Result<Vec<ControllerInput>, ControllerError> {
        let Some(seq) = seq else {
            return Ok(vec![input]);
        };
        if seq < self.next || self.held.contains_key(&seq) {
            return Err(ControllerError::StaleInput {
                seq,
                expected: self.next,
            });
        }
        if seq > self.next {
            if self.held.len() >= MAX_HELD {
                return Err(ControllerError::InputBacklogFull { id: id.to_owned() });
            }
            self.held.insert(seq, input);
            return Ok(Vec::new());
        }
        let mut ready = vec![input];
        self.next += 1;
        while let Some(input) = self.held.remove(&self.next) {
            ready.push(input);
            self.next += 1;
        }
        Ok(ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(inputs: &[ControllerInput]) -> String {
        inputs
            .iter()
            .map(|i| String::from_utf8(i.data.clone().unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn shuffled_inputs_come_out_in_order() {
        let mut sequencer = InputSequencer::new();
        let mut out = String::new();
        for seq in [3, 1, 2, 6, 5, 4] {
            let ready = sequencer
                .accept(ControllerInput::data(seq.to_string()), Some(seq), "t")
                .unwrap();
            out.push_str(&text(&ready));
        }
        assert_eq!(out, "123456");
        // Unsequenced input goes straight through.
        let ready = sequencer
            .accept(ControllerInput::data("x"), None, "t")
            .unwrap();
        assert_eq!(text(&ready), "x");
    }

    #[test]
    fn a_rewind_holds_the_released_inputs_again() {
        let mut sequencer = InputSequencer::new();
        for seq in [2, 3] {
            sequencer
                .accept(ControllerInput::data(seq.to_string()), Some(seq), "t")
                .unwrap();
        }
        let first = sequencer.next();
        let ready = sequencer
            .accept(ControllerInput::data("1"), Some(1), "t")
            .unwrap();
        assert_eq!(text(&ready), "123");
        // Say they could not be applied: 1 is to be sent again, 2 and 3 wait.
        sequencer.rewind(first, ready);
        assert_eq!(sequencer.next(), 1);
        let ready = sequencer
            .accept(ControllerInput::data("1"), Some(1), "t")
            .unwrap();
        assert_eq!(text(&ready), "123");
    }

    #[test]
    fn a_used_number_is_refused_and_the_hold_is_bounded() {
        let mut sequencer = InputSequencer::new();
        sequencer
            .accept(ControllerInput::data("a"), Some(1), "t")
            .unwrap();
        let err = sequencer
            .accept(ControllerInput::data("a"), Some(1), "t")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "input number 1 came after number 1 was taken; the next expected is 2"
        );
        for seq in 3..3 + MAX_HELD as u64 {
            sequencer
                .accept(ControllerInput::data("h"), Some(seq), "t")
                .unwrap();
        }
        let err = sequencer
            .accept(ControllerInput::data("h"), Some(5000), "t")
            .unwrap_err();
        assert!(
            matches!(err, ControllerError::InputBacklogFull { .. }),
            "{err}"
        );
    }

    #[test]
    fn signal_names_parse_in_any_common_spelling() {
        for name in ["SIGINT", "INT", "sigint", " int "] {
            assert_eq!(parse_signal(name).unwrap(), Signal::SIGINT, "{name}");
        }
        assert_eq!(parse_signal("SIGKILL").unwrap(), Signal::SIGKILL);
        assert!(matches!(
            parse_signal("SIGNOPE"),
            Err(ControllerError::UnknownSignal { .. })
        ));
    }
}
