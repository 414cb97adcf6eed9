//! Durations as messages show them: `300ms`, `30s`, `5m`, `2h`.

/// A duration for messages: `300ms`, `30s`, `5m`, `2h` (and `1.5s` for a
/// server timeout set in fractions of a second).
pub(crate) fn shown_duration(duration: std::time::Duration) -> String {
    let ms = duration.as_millis();
    match ms {
        0 => format!("{}µs", duration.as_micros()),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 && ms >= 60_000 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms if ms < 1000 => format!("{ms}ms"),
        _ => format!("{}s", duration.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn durations_read_as_people_write_them() {
        for (duration, text) in [
            (Duration::from_millis(300), "300ms"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_secs(300), "5m"),
            (Duration::from_secs(7200), "2h"),
            (Duration::from_secs(90), "90s"),
        ] {
            assert_eq!(super::shown_duration(duration), text);
        }
    }
}
