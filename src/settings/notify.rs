//! `[ui] notify`: how a prompt that has waited calls the person back.

/// How a waiting prompt calls the person back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Notify {
    /// The terminal bell.
    #[default]
    Bell,
    /// A desktop notification (OSC 9 and OSC 777), for terminals that show one.
    Desktop,
    /// Nothing.
    Off,
}

impl Notify {
    /// The value a settings file writes: `bell`, `desktop`, `off`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "bell" => Some(Self::Bell),
            "desktop" => Some(Self::Desktop),
            "off" => Some(Self::Off),
            _ => None,
        }
    }

    /// The name a settings file writes.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bell => "bell",
            Self::Desktop => "desktop",
            Self::Off => "off",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_reads_back_by_its_name() {
        for notify in [Notify::Bell, Notify::Desktop, Notify::Off] {
            assert_eq!(Notify::parse(notify.name()), Some(notify));
        }
        assert_eq!(Notify::parse("Bell"), None);
        assert_eq!(Notify::parse(""), None);
    }
}
