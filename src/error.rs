//! The library's error type. Every argument error names the argument, the value it had and the
//! rule it broke (and, where short, what would be valid).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// A caller's argument breaks a documented rule.
    #[error("mate: argument `{arg}` = {value}: {rule}")]
    Arg { arg: &'static str, value: String, rule: String },
    /// The CUDA driver refused something (loading, launching).
    #[error("mate runtime error: {0}")]
    Cuda(String),
    /// A bug in mate itself; report it.
    #[error("mate runtime error (internal): {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand for an argument error.
pub fn arg_err(arg: &'static str, value: impl std::fmt::Display, rule: impl Into<String>) -> Error {
    Error::Arg { arg, value: value.to_string(), rule: rule.into() }
}

/// `Ok(())` if the condition holds, else an argument error naming `arg`, the value and the rule.
/// A macro, not a function: the value and rule (often `format!`s) are built only on failure, so
/// a passing check costs one branch on the per-call path (bench/host_cost.py).
#[macro_export]
macro_rules! ensure {
    ($ok:expr, $arg:expr, $value:expr, $rule:expr $(,)?) => {
        if $ok {
            Ok(())
        } else {
            Err($crate::error::arg_err($arg, $value, $rule))
        }
    };
}
pub use crate::ensure;

/// The message of a caught panic (for errors that must not unwind across the C++ bridge).
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
