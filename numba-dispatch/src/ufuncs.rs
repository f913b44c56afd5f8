//! Ufuncs jitted code may call (`@vectorize`, `@guvectorize` objects). Their driver
//! (numba-py's `DUFunc`/`GUFunc`) owns the loops: it chooses one for a call's argument
//! types by NumPy's casting rules, or compiles one, and the pipeline types and lowers
//! the call around that loop's kernel (`numba_typeinfer::ufunc_call`).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex};

use numba_typeinfer::{TypeId, UFuncLoop};

/// A ufunc's loop selection.
pub trait UFuncSource: Send + Sync {
    /// The loop for a call with these argument types (arrays and scalars; outputs
    /// included when passed); the error says why there is none.
    fn select_loop(&self, args: &[TypeId]) -> Result<UFuncLoop, String>;
}

static UFUNCS: LazyLock<Mutex<HashMap<u64, Arc<dyn UFuncSource>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Register a ufunc, returning the id its `GlobalKind::UFunc` names.
pub fn register_ufunc(source: Arc<dyn UFuncSource>) -> u64 {
    let id = crate::NEXT_ID.fetch_add(1, Ordering::Relaxed);
    UFUNCS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, source);
    id
}

/// The ufunc registered under `id`.
pub fn lookup_ufunc(id: u64) -> Option<Arc<dyn UFuncSource>> {
    UFUNCS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned()
}
