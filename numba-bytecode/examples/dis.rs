//! `cargo run -p numba-bytecode --example dis -- FILE [--cfg] [--flow]`
//!
//! Prints the `dis.dis` listing of every code object in FILE, like `python -m dis`. FILE is
//! a `.pyc` (16-byte header + marshal) or a raw `marshal.dumps(code)` blob. With `--cfg`,
//! each code object's `NUMBA_DUMP_CFG` follows its listing; with `--flow`, Numba's
//! bytecode table and the stack dataflow too. A code object Numba cannot analyse gets an
//! `analysis error:` line instead, and the tool goes on with the next one.

use std::process::ExitCode;

use numba_bytecode::{flow, listing, marshal, ByteCode, CodeObject, Constant};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = args.iter().any(|a| a == "--cfg");
    let show_flow = args.iter().any(|a| a == "--flow");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: dis FILE.pyc|FILE.marshal [--cfg] [--flow]");
        return ExitCode::FAILURE;
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("dis: cannot read {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = if path.ends_with(".pyc") {
        marshal::read_pyc(&bytes)
    } else {
        marshal::read_code(&bytes)
    };
    let code = match code {
        Ok(c) => c,
        Err(e) => {
            eprintln!("dis: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if cfg || show_flow {
        print_with_analysis(&code, cfg, show_flow, true);
    } else {
        match listing::dis(&code) {
            Ok(text) => print!("{text}"),
            Err(e) => {
                eprintln!("dis: {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// `dis.dis` order (parent, then nested code objects), each followed by its analyses.
fn print_with_analysis(code: &CodeObject, cfg: bool, show_flow: bool, top: bool) {
    if !top {
        println!("\nDisassembly of {code}:");
    }
    match listing::disassemble(code) {
        Ok(text) => print!("{text}"),
        Err(e) => println!("listing error: {e}"),
    }
    match ByteCode::decode(code.clone()).and_then(|bc| flow::analyze(&bc).map(|df| (bc, df))) {
        Ok((bc, df)) => {
            if cfg {
                println!("-- NUMBA_DUMP_CFG of {} --", code.qualname);
                print!("{}", df.cfg.numba_dump());
            }
            if show_flow {
                println!("-- bytecode of {} --", code.qualname);
                print!("{}", bc.dump());
                println!("-- dataflow of {} --", code.qualname);
                print!("{}", df.dump(&bc));
            }
        }
        Err(e) => println!("-- analysis error in {}: {e}", code.qualname),
    }
    for c in &code.consts {
        if let Constant::Code(inner) = c {
            print_with_analysis(inner, cfg, show_flow, false);
        }
    }
}
