//! allow-rust: the allow processor (ABI 2) built with the Rust SDK: the same
//! config and masks as the C build (allow.c, whose comment is the
//! specification). Built by plugins/build.sh into plugins/wasm/allow-rust.wasm.
#![no_std]

use realizar::{alloc_slice, array_elements, config_check_keys, config_error, config_raw, mask_allow, mask_deny, mask_words, pack_init_v2, parse_i32};

realizar::marker_v2!(processor);
realizar::alloc_export!();

struct State {
    n_vocab: i32,
    base: &'static mut [u32],
    live: &'static mut [u32],
    once: bool,
    accepted: &'static mut [i32],
}

static mut STATE: Option<State> = None;

#[no_mangle]
pub extern "C" fn realizar_init(n_vocab: i32, _max_piece: i32, config_ptr: i32, config_len: i32, features: i64) -> i64 {
    let need = realizar::FEATURE_MASK | realizar::FEATURE_TOKEN_ATTRS | realizar::FEATURE_ACCEPTED;
    if features & need != need {
        realizar::log(realizar::LOG_ERROR, "the host lacks the mask, token_attrs or accepted feature");
        return realizar::ERR_FEATURE as i64;
    }
    match init(n_vocab, config_ptr, config_len) {
        Ok(()) => pack_init_v2(0, 0, realizar::OUTPUT_MASK),
        Err(code) => code as i64,
    }
}

/// A boolean config key: default when absent, ERR_CONFIG otherwise.
fn config_bool(key: &str, default: bool) -> Result<bool, i32> {
    let mut buf = [0u8; 8];
    match config_raw(key, &mut buf)? {
        None => Ok(default),
        Some(b"true") => Ok(true),
        Some(b"false") => Ok(false),
        Some(_) => Err(config_error(key, "must be true or false")),
    }
}

fn init(n_vocab: i32, config_ptr: i32, config_len: i32) -> Result<(), i32> {
    if n_vocab <= 0 {
        return Err(realizar::ERR_VOCAB);
    }
    config_check_keys(config_ptr, config_len, &["tokens", "eog", "once"])?;
    let words = mask_words(n_vocab);
    let base = alloc_slice::<u32>(words).ok_or(realizar::ERR_FAILED)?;
    let live = alloc_slice::<u32>(words).ok_or(realizar::ERR_FAILED)?;
    let buf = alloc_slice::<u8>(64 * 1024).ok_or(realizar::ERR_FAILED)?;
    let raw = match config_raw("tokens", buf)? {
        Some(raw) => raw,
        None => return Err(config_error("tokens", "is required")),
    };
    let ok = array_elements(raw, |e| match parse_i32(e) {
        Some(id) if (0..n_vocab).contains(&id) => {
            mask_allow(base, id);
            true
        }
        _ => false,
    });
    if !ok {
        return Err(config_error("tokens", "must be an array of token ids in [0, n_vocab)"));
    }
    let eog = config_bool("eog", true)?;
    let once = config_bool("once", false)?;
    if eog {
        let attrs = alloc_slice::<u32>(n_vocab as usize).ok_or(realizar::ERR_FAILED)?;
        // Safety: attrs holds n_vocab words inside this module's memory.
        if unsafe { realizar::host::token_attrs(0, attrs.as_mut_ptr(), n_vocab) } != n_vocab {
            return Err(realizar::ERR_FAILED);
        }
        for (id, a) in attrs.iter().enumerate() {
            if a & realizar::ATTR_EOG != 0 {
                mask_allow(base, id as i32);
            }
        }
    }
    let accepted = alloc_slice::<i32>(256).ok_or(realizar::ERR_FAILED)?;
    // Safety: one instance serves one call at a time (ABI §4).
    unsafe { STATE = Some(State { n_vocab, base, live, once, accepted }) };
    Ok(())
}

#[no_mangle]
pub extern "C" fn realizar_reset(_seed: i64, _n_prompt: i32) -> i32 {
    // Safety: see init.
    match unsafe { STATE.as_mut() } {
        Some(s) => {
            s.live.copy_from_slice(s.base);
            0
        }
        None => realizar::ERR_STATE,
    }
}

#[no_mangle]
pub extern "C" fn realizar_process(n_accepted: i32, _count: i32) -> i32 {
    // Safety: see init.
    let s = match unsafe { STATE.as_mut() } {
        Some(s) => s,
        None => return realizar::ERR_STATE,
    };
    if s.once && n_accepted > 0 {
        if n_accepted as usize > s.accepted.len() {
            // Rare: more than ever before; the bump allocator never frees.
            match alloc_slice::<i32>(n_accepted as usize) {
                Some(a) => s.accepted = a,
                None => return realizar::ERR_FAILED,
            }
        }
        // Safety: s.accepted lies inside this module's memory.
        let got = unsafe { realizar::host::accepted_get(s.accepted.as_mut_ptr(), s.accepted.len() as i32) };
        for &t in s.accepted.iter().take(got.max(0) as usize) {
            if (0..s.n_vocab).contains(&t) {
                mask_deny(s.live, t);
            }
        }
    }
    s.live.as_ptr() as usize as i32
}
