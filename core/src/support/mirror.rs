/// Conversions both ways between a core enum and a binding's copy of it with the
/// same variant names (the WIT enums of the component guest and of the wasmtime
/// host), written once so no binding spells a mapping by hand:
/// `mneme_core::mirror_enum!(mneme_core::Action, wit::Action { None, Prune, Summarize });`
#[macro_export]
macro_rules! mirror_enum {
    ($core:path, $binding:path { $($variant:ident),+ $(,)? }) => {
        impl From<$core> for $binding {
            fn from(value: $core) -> Self {
                use $core as C;
                use $binding as B;
                match value {
                    $(C::$variant => B::$variant,)+
                }
            }
        }
        impl From<$binding> for $core {
            fn from(value: $binding) -> Self {
                use $core as C;
                use $binding as B;
                match value {
                    $(B::$variant => C::$variant,)+
                }
            }
        }
    };
}
