//! The closed value sets of choice arguments ([`ArtifactChoice`]; the
//! agent kinds are [`agent_vocab::AgentKind`]): typed in [`crate::ToolCall`]s, listed as schema `enum`s
//! by the catalogue. A leaf both of those import.

use serde::{Deserialize, Serialize};

macro_rules! choice {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $wire:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $wire)] $variant,)*
        }

        impl $name {
            /// Every value's wire name, in declaration order (the schema's `enum`).
            pub const NAMES: &'static [&'static str] = &[$($wire),*];

            /// The wire name.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)*
                }
            }
        }
    };
}

choice! {
    /// The views `artifact_open` offers.
    ArtifactChoice {
        /// The user's editor.
        Editor => "editor",
        /// Changes against HEAD.
        Diff => "diff",
    }
}
