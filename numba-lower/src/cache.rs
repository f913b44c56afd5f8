//! Compiled code as bytes, for an on-disk cache (`cache=True`): the optimised module as
//! LLVM bitcode, self-contained, and the way back to a callable [`CompiledFunction`] in
//! another process.
//!
//! Compiled code reaches the outside world in three ways, and an image keeps only the
//! first: by symbol name (the runtime's functions and data, libm), which the JIT maps
//! again when the image is loaded; by calls to other jitted functions, named
//! `numba_rs.callee.<id>.<address>`, whose own images are linked in (as Numba links its
//! callees' libraries into the caller's); and by process addresses baked in as
//! constants (captured arrays past the in-module limit, object mode's environment, the
//! word a mutually recursive callee fills), which make a function uncacheable.
//!
//! Beside the image the cache stores its machine code ([`object_code`]); loading links
//! that into the JIT and runs no LLVM at all.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, GlobalValue};
use numba_typeinfer::TypeId;

use crate::{codegen, llvm_err, CompiledFunction, LowerError, Wrappers, R};

/// Why a function cannot be cached, in the words of Numba's warning
/// ("Cannot cache compiled function "f" as it uses {reason}").
pub type Uncacheable = String;

/// A callee's image and its symbol, for [`image`]: the callee named by dispatcher id and
/// native address.
pub type CalleeImages<'a> = dyn Fn(u64, usize) -> Result<(String, Vec<u8>), Uncacheable> + 'a;

/// Identifies the code generator an image is valid for: target triple, host CPU and its
/// features, and the LLVM version. Part of every cache key.
pub fn host_id() -> R<String> {
    static ID: std::sync::OnceLock<Result<String, LowerError>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let machine = codegen::host_machine()?;
        let (major, minor, patch) = inkwell::support::get_llvm_version();
        Ok(format!(
            "{} {} {} llvm{major}.{minor}.{patch}",
            machine.get_triple().as_str().to_string_lossy(),
            machine.get_cpu().to_string_lossy(),
            machine.get_feature_string().to_string_lossy(),
        ))
    })
    .clone()
}

/// The bitcode of `compiled`'s optimised module with every jitted callee linked in, or
/// why it cannot be cached. `callees` gives a callee's own image.
pub fn image(
    compiled: &CompiledFunction,
    callees: &CalleeImages<'_>,
) -> Result<Vec<u8>, Uncacheable> {
    if compiled.object_env.is_some() {
        return Err("object mode".into());
    }
    if !compiled.frozen_data.0.is_empty() {
        return Err("dynamic globals".into());
    }
    let text = &compiled.optimized_ir;
    if text.contains(crate::impls::objmode_with::HELPER) {
        return Err("lifted code".into());
    }
    if bakes_address(text) {
        return Err("dynamic globals".into());
    }
    let ctx = Context::create();
    let module = codegen::parse_ir(&ctx, text, &compiled.symbol).map_err(|e| e.to_string())?;
    link_callees(&ctx, &module, callees)?;
    name_typecodes(&module)?;
    module.verify().map_err(|e| e.to_string())?;
    Ok(module.write_bitcode_to_memory().as_slice().to_vec())
}

/// Names of the tables of typecodes a module hands the runtime (a raised exception's
/// argument types, `print`'s value types) start with this. Typecodes are numbers this
/// process gave out, so an image names the types ([`TYPECODE_NAMES`]) and loading
/// renumbers the tables.
const TYPECODE_PREFIX: &str = "numba_rs.typecodes.";
/// The named metadata listing each table with its types' names.
const TYPECODE_NAMES: &str = "numba_rs.typecode_names";

/// A constant table of `types`' typecodes in `module`. `linkonce_odr`: the optimiser
/// neither merges nor renames it (as it may a private constant), and the copies a
/// module gets by linking one library in twice (directly and through another) are one.
pub(crate) fn typecode_table<'ctx>(module: &Module<'ctx>, types: &[TypeId]) -> GlobalValue<'ctx> {
    let ctx = module.get_context();
    let i32t = ctx.i32_type();
    let init = i32t.const_array(
        &types
            .iter()
            .map(|t| i32t.const_int(u64::from(t.0), false))
            .collect::<Vec<_>>(),
    );
    let base = module.get_name().to_string_lossy().into_owned();
    let name = (0..)
        .map(|n| format!("{TYPECODE_PREFIX}{base}.{n}"))
        .find(|n| module.get_global(n).is_none())
        .unwrap_or_default();
    let g = module.add_global(init.get_type(), None, &name);
    g.set_constant(true);
    g.set_linkage(Linkage::LinkOnceODR);
    g.set_initializer(&init);
    g
}

fn typecode_tables<'ctx>(module: &Module<'ctx>) -> Vec<GlobalValue<'ctx>> {
    module
        .get_globals()
        .filter(|g| {
            g.get_name()
                .to_str()
                .is_ok_and(|n| n.starts_with(TYPECODE_PREFIX))
                && g.get_initializer().is_some()
        })
        .collect()
}

/// The typecodes in a table.
fn table_codes(g: GlobalValue<'_>) -> Vec<u32> {
    let Some(init) = g.get_initializer() else {
        return Vec::new();
    };
    let n = init.get_type().into_array_type().len();
    (0..n)
        .filter_map(|i| {
            // SAFETY: `init` is a constant array of i32 with `n` elements.
            unsafe {
                let e = inkwell::llvm_sys::core::LLVMGetAggregateElement(init.as_value_ref(), i);
                (!e.is_null()).then(|| inkwell::llvm_sys::core::LLVMConstIntGetZExtValue(e) as u32)
            }
        })
        .collect()
}

/// Record each typecode table's types by name, or say which type cannot be named.
fn name_typecodes(module: &Module<'_>) -> Result<(), Uncacheable> {
    let ctx = module.get_context();
    for g in typecode_tables(module) {
        let mut node = vec![ctx.metadata_string(&g.get_name().to_string_lossy()).into()];
        for code in table_codes(g) {
            let t = TypeId(code);
            let name = numba_typeinfer::types::cache_name(t)
                .ok_or_else(|| format!("the type {t}, which the cache cannot name yet"))?;
            node.push(ctx.metadata_string(&name).into());
        }
        module
            .add_global_metadata(TYPECODE_NAMES, &ctx.metadata_node(&node))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Each typecode table a module's metadata names ([`name_typecodes`]), with its types'
/// names.
fn named_typecode_tables(module: &Module<'_>) -> Vec<(String, Vec<String>)> {
    module
        .get_global_metadata(TYPECODE_NAMES)
        .into_iter()
        .filter_map(|node| {
            let items: Vec<String> = node
                .get_node_values()
                .unwrap_or_default()
                .into_iter()
                .map(|v| match v {
                    inkwell::values::BasicMetadataValueEnum::MetadataValue(m) => m
                        .get_string_value()
                        .map(|s| String::from_utf8_lossy(s).into_owned())
                        .unwrap_or_default(),
                    _ => String::new(),
                })
                .collect();
            let (table, names) = items.split_first()?;
            Some((table.clone(), names.to_vec()))
        })
        .collect()
}

/// This process's typecodes of types named in an image.
fn typecodes_of(names: &[String]) -> R<Vec<u32>> {
    names
        .iter()
        .map(|name| {
            numba_typeinfer::types::parse_cache_name(name)
                .map(|t| t.0)
                .ok_or_else(|| LowerError::Llvm(format!("cached type {name} does not parse")))
        })
        .collect()
}

/// Renumber the typecode tables of a loaded image for this process.
fn renumber_typecodes(module: &Module<'_>) -> R<()> {
    let i32t = module.get_context().i32_type();
    for (table, names) in named_typecode_tables(module) {
        let g = module
            .get_global(&table)
            .ok_or_else(|| LowerError::Llvm(format!("cached image lacks {table}")))?;
        let codes: Vec<_> = typecodes_of(&names)?
            .into_iter()
            .map(|c| i32t.const_int(u64::from(c), false))
            .collect();
        g.set_initializer(&i32t.const_array(&codes));
    }
    Ok(())
}

/// The named metadata listing the dispatcher ids whose code a module links in.
pub(crate) const LINKED_METADATA: &str = "numba_rs.linked";

/// The dispatcher ids of the jitted functions whose code an optimised module's text
/// ([`CompiledFunction::optimized_ir`]) has linked in, directly or through another.
pub fn linked_callees(text: &str) -> Vec<u64> {
    let head = format!("!{LINKED_METADATA} = !{{");
    let Some(list) = text
        .lines()
        .find_map(|l| l.strip_prefix(head.as_str()))
        .and_then(|l| l.strip_suffix('}'))
    else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for node in list.split(',').map(str::trim) {
        let def = format!("{node} = !{{!\"");
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix(def.as_str()))
            .and_then(|rest| rest.split('"').next())
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(id) = id.filter(|id| !ids.contains(id)) {
            ids.push(id);
        }
    }
    ids
}

/// Whether the module text holds an address as a constant (`inttoptr (i64 1234 to ptr)`).
fn bakes_address(text: &str) -> bool {
    text.match_indices("inttoptr (i64 ").any(|(at, pat)| {
        text[at + pat.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '-')
    })
}

/// Replace each `numba_rs.callee.<id>.<address>` declaration by the callee's code.
fn link_callees<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    callees: &CalleeImages<'_>,
) -> Result<(), Uncacheable> {
    // By name: linking may replace a declaration, so no value is held across it.
    let decls: Vec<_> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0)
        .filter_map(|f| {
            let name = f.get_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix("numba_rs.callee.")?;
            let (id, addr) = rest.split_once('.')?;
            let ids = (
                id.parse::<u64>().ok()?,
                usize::from_str_radix(addr, 16).ok()?,
            );
            Some((name, ids))
        })
        .collect();
    let defined = |name: &str| {
        module
            .get_function(name)
            .filter(|f| f.count_basic_blocks() > 0)
    };
    for (decl_name, (id, addr)) in decls {
        let Some(decl) = module.get_function(&decl_name) else {
            continue;
        };
        let (symbol, bitcode) = callees(id, addr)?;
        if let Some(existing) = module.get_function(&symbol) {
            // Linked already (through another callee), or declared under its name.
            decl.replace_all_uses_with(existing);
            // SAFETY: no use of the declaration is left.
            unsafe { decl.delete() };
            if existing.count_basic_blocks() > 0 {
                continue;
            }
        } else {
            // The declaration takes the callee's name, so linking resolves it.
            decl.as_global_value().set_name(&symbol);
        }
        let buf = MemoryBuffer::create_from_memory_range_copy(&bitcode, &symbol);
        let m = Module::parse_bitcode_from_buffer(&buf, ctx).map_err(|e| e.to_string())?;
        codegen::link_internal(module, m).map_err(|e| e.to_string())?;
        if defined(&symbol).is_none() {
            return Err(format!("a callee ({symbol}) that did not link"));
        }
    }
    Ok(())
}

/// A cache entry's machine code: the image compiled for the host, its definitions
/// renamed for the entry (`<name>.k<hash of the image>`) so that code loaded from two
/// entries, or from an entry and a fresh compile, never defines one name twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectCode {
    /// The relocatable object file.
    pub object: Vec<u8>,
    /// The suffix the definitions' names took.
    pub suffix: String,
    /// The definitions' names before the suffix.
    pub exports: Vec<String>,
    /// Each typecode table (its name before the suffix) and its types' names: loading
    /// writes this process's typecodes into it.
    pub typecodes: Vec<(String, Vec<String>)>,
}

/// FNV-1a: a hash that is the same in every process and build.
fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Compile an image ([`image`]) to the machine code the cache stores beside it.
pub fn object_code(image: &[u8]) -> R<ObjectCode> {
    let ctx = Context::create();
    let buf = MemoryBuffer::create_from_memory_range_copy(image, "image");
    let module = Module::parse_bitcode_from_buffer(&buf, &ctx).map_err(llvm_err)?;
    let machine = codegen::host_machine()?;
    module.set_triple(&machine.get_triple());
    let suffix = format!(".k{:016x}", stable_hash(image));
    let typecodes = named_typecode_tables(&module);
    for (table, _) in &typecodes {
        // Written at load time: kept out of read-only memory.
        if let Some(g) = module.get_global(table) {
            g.set_constant(false);
        }
    }
    let exports = crate::jit::exported_names(&module);
    for name in &exports {
        crate::jit::rename(&module, name, &format!("{name}{suffix}"));
    }
    let object = crate::jit::emit_object(&module)?.as_slice().to_vec();
    Ok(ObjectCode {
        object,
        suffix,
        exports,
        typecodes,
    })
}

/// A function loaded from the cache: its machine code linked into the JIT, the
/// typecode tables filled in for this process. No LLVM runs; the module's text (for
/// `inspect_llvm`, or for a caller that links the function in) is made from `image`
/// when first asked for.
pub fn load(
    image: std::sync::Arc<[u8]>,
    code: &ObjectCode,
    symbol: &str,
    (arg_types, return_type): (&[TypeId], TypeId),
    wrappers: &Wrappers,
) -> R<CompiledFunction> {
    let start = std::time::Instant::now();
    let renamed: Vec<String> = code
        .exports
        .iter()
        .map(|e| format!("{e}{}", code.suffix))
        .collect();
    let loaded = crate::jit::load_object(
        &code.object,
        &renamed,
        code.exports.iter().cloned().zip(renamed.iter().cloned()),
        symbol,
    )?;
    for (table, names) in &code.typecodes {
        let codes = typecodes_of(names)?;
        let addr = loaded.address(table)?;
        // SAFETY: the table is a writable global of `codes.len()` i32s in the object
        // just linked (`object_code` made it so).
        unsafe {
            std::ptr::copy_nonoverlapping(codes.as_ptr(), addr as *mut u32, codes.len());
        }
    }
    let (native, entry, wrapper_addresses) = codegen::addresses(&loaded, symbol, wrappers)?;
    let text = crate::IrText::lazy(move || {
        let ctx = Context::create();
        let buf = MemoryBuffer::create_from_memory_range_copy(&image, "image");
        Module::parse_bitcode_from_buffer(&buf, &ctx)
            .map_err(llvm_err)
            .and_then(|m| {
                renumber_typecodes(&m)?;
                Ok(m.print_to_string().to_string())
            })
            .unwrap_or_else(|e| format!("; the cached module does not load: {e}"))
    });
    // The probe's machine code in the object (callees are linked in): a chance match
    // in data only costs the guard.
    let probe = numba_nrt::stack_guard::STACK_PROBE_BYTES;
    let may_recurse = code.object.windows(probe.len()).any(|w| w == probe);
    Ok(CompiledFunction {
        may_recurse,
        timings: vec![("load_from_cache".into(), start.elapsed())],
        wrappers: wrapper_addresses,
        ..CompiledFunction::new(
            (symbol.to_string(), native, entry),
            (arg_types, return_type),
            (text.clone(), text),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::linked_callees;

    #[test]
    fn linked_callees_from_named_metadata() {
        // The shape LLVM prints: the named list, then the nodes (merged by linking).
        let text = "define i32 @f() {\n  ret i32 0\n}\n\n!numba_rs.linked = !{!0, !1, !2}\n\n\
                    !0 = !{!\"17\"}\n!1 = !{!\"4\"}\n!2 = !{!\"17\"}\n";
        assert_eq!(linked_callees(text), vec![17, 4]);
        assert!(linked_callees("define void @g() {\n  ret void\n}\n").is_empty());
    }
}
