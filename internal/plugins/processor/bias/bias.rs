//! logit-bias: a processor that adds a fixed bias to the logits of chosen
//! tokens, or bans them, before the sampler sees them (OpenAI's logit_bias).
//! Rust, no_std, on the SDK in abi/guest/rust; built by plugins/build.sh
//! into plugins/wasm/logit-bias.wasm.
//!
//! Each step, for each configured token id, in the order of the config:
//!
//!   bias b (a number): logit[id] + b, rounded to f32 (one f32 addition)
//!   false:             -Inf, so that no sampler can choose it
//!
//! Every other logit is left as it is. The edits go out in config order; a
//! later entry for the same id wins, as the host applies edits in order.
//!
//! Config (JSON object; another key is refused, naming it):
//!   logit_bias  [{}] {"id": bias or false, ...}, ids in [0, n_vocab), at most 1024 entries
//!
//! Full-logits mode: the host writes n_vocab f32 logits, the plugin answers
//! (i32 id, f32 logit) edits right after them.
#![no_std]

use realizar::{alloc_slice, config_check_keys, config_error, config_raw, object_members, pack_init, parse_f64, parse_i32};

realizar::marker!(processor);
realizar::alloc_export!();

/// The most entries logit_bias may have.
const MAX_ENTRIES: usize = 1024;

/// One configured edit: the token, and its bias (None: banned).
#[derive(Clone, Copy)]
struct Entry {
    id: i32,
    bias: Option<f32>,
}

struct State {
    /// The input region: n_vocab logits, then the output region.
    logits: &'static mut [f32],
    /// The output region: (id, logit bits) pairs, one per entry.
    edits: &'static mut [[u32; 2]],
    entries: &'static mut [Entry],
}

static mut STATE: Option<State> = None;

#[no_mangle]
pub extern "C" fn realizar_init(n_vocab: i32, _max_piece: i32, config_ptr: i32, config_len: i32) -> i64 {
    match init(n_vocab, config_ptr, config_len) {
        Ok(addr) => pack_init(addr, 0),
        Err(code) => code as i64,
    }
}

fn init(n_vocab: i32, config_ptr: i32, config_len: i32) -> Result<u32, i32> {
    if n_vocab <= 0 {
        return Err(realizar::ERR_VOCAB);
    }
    config_check_keys(config_ptr, config_len, &["logit_bias"])?;
    // The input and output regions are adjacent (ABI §4.1): n_vocab logits,
    // then n_vocab edits, the capacity the host allows in full mode.
    let n = n_vocab as usize;
    let region = alloc_slice::<u32>(3 * n).ok_or(realizar::ERR_VOCAB)?;
    let (logits, edits) = region.split_at_mut(n);
    // Safety: fresh u32 words seen as f32 logits and as (id, bits) pairs,
    // types of the same size and alignment (4), each part used one way only.
    let logits = unsafe { core::slice::from_raw_parts_mut(logits.as_mut_ptr() as *mut f32, n) };
    let edits = unsafe { core::slice::from_raw_parts_mut(edits.as_mut_ptr() as *mut [u32; 2], n) };
    let entries = alloc_slice::<Entry>(MAX_ENTRIES).ok_or(realizar::ERR_VOCAB)?;
    let count = parse_bias(n_vocab, entries)?;
    let addr = logits.as_ptr() as usize as u32;
    // Safety: one instance serves one call at a time (ABI §4).
    unsafe { STATE = Some(State { logits, edits, entries: &mut entries[..count] }) };
    Ok(addr)
}

/// Reads logit_bias into entries; their number.
fn parse_bias(n_vocab: i32, entries: &mut [Entry]) -> Result<usize, i32> {
    let buf = alloc_slice::<u8>(64 * 1024).ok_or(realizar::ERR_FAILED)?;
    let raw = match config_raw("logit_bias", buf)? {
        Some(raw) => raw,
        None => return Ok(0),
    };
    let mut count = 0;
    let ok = object_members(raw, |key, value| {
        let id = match parse_i32(key) {
            Some(id) if (0..n_vocab).contains(&id) => id,
            _ => return false,
        };
        let bias = match value {
            b"false" => None,
            _ => match parse_f64(value) {
                Some(b) => Some(b as f32),
                None => return false,
            },
        };
        if count == entries.len() {
            return false;
        }
        entries[count] = Entry { id, bias };
        count += 1;
        true
    });
    if !ok {
        return Err(config_error("logit_bias", "must be {\"id\": bias or false} with ids in the vocabulary, at most 1024"));
    }
    Ok(count)
}

#[no_mangle]
pub extern "C" fn realizar_reset(_seed: i64, _n_prompt: i32) -> i32 {
    // Safety: see init.
    match unsafe { STATE.as_ref() } {
        Some(_) => 0,
        None => realizar::ERR_STATE,
    }
}

#[no_mangle]
pub extern "C" fn realizar_process(_prev: i32, count: i32) -> i32 {
    // Safety: see init.
    let s = match unsafe { STATE.as_mut() } {
        Some(s) => s,
        None => return realizar::ERR_STATE,
    };
    let mut n = 0;
    for e in s.entries.iter() {
        if e.id >= count {
            continue;
        }
        let logit = match e.bias {
            Some(b) => s.logits[e.id as usize] + b,
            None => f32::NEG_INFINITY,
        };
        s.edits[n] = [e.id as u32, logit.to_bits()];
        n += 1;
    }
    n as i32
}
