//! min-p: a sampler that keeps every token at least min_p times as likely as
//! the most likely one, then draws among them at a temperature (Nguyen et
//! al., "Turning Up the Heat: Min-p Sampling", 2024). Rust, no_std, on the
//! SDK in abi/guest/rust; built by plugins/build.sh into plugins/wasm/min-p.wasm.
//!
//! The rule, in the contract's arithmetic (ABI §9) so that it is exact:
//!
//!   m     = the largest logit (NaN logits never count)
//!   keep  = { i : logit[i] == m or exp(logit[i] - m) >= min_p }
//!           (p_i / p_max >= min_p with exp of ABI §9.2; the maximum is kept even when it is -Inf)
//!   temperature <= 0: the first kept token in the contract order (argmax,
//!                     lowest id on ties), and no uniform is drawn;
//!   otherwise:        the kept tokens sorted in the contract order, softmax at
//!                     the temperature, one uniform of the turn's RNG, draw (ABI §9.3).
//!
//! Config (JSON object; another key is refused, naming it):
//!   min_p        [0.05] in [0, 1]; 0 keeps every token, 1 only the ties of the maximum
//!   temperature  [1.0]  any number; <= 0 is greedy
//!
//! Full-logits mode: the host writes n_vocab f32 logits each step.
#![no_std]

use realizar::{alloc_slice, config_check_keys, config_error, config_f64, draw, exp, pack_init, softmax, sort_candidates, Rng};

realizar::marker!(sampler);
realizar::alloc_export!();

struct State {
    /// The input region: the host writes n_vocab logits here each step.
    logits: &'static mut [f32],
    /// Scratch for the kept candidates and their probabilities, n_vocab each.
    ids: &'static mut [i32],
    vals: &'static mut [f32],
    probs: &'static mut [f64],
    min_p: f64,
    /// ln(min_p) less a margin, or -Inf: logits below m + cut_below are
    /// surely dropped, so the step calls exp only near the threshold.
    cut_below: f64,
    temperature: f64,
    rng: Rng,
}

/// The largest logit that is not NaN (-Inf when there is none), eight
/// entries per loop iteration.
fn max_logit(logits: &[f32]) -> f32 {
    let mut m = f32::NEG_INFINITY;
    let chunks = logits.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        for &l in chunk {
            if l > m {
                m = l;
            }
        }
    }
    for &l in tail {
        if l > m {
            m = l;
        }
    }
    m
}

static mut STATE: Option<State> = None;

fn state() -> Option<&'static mut State> {
    // Safety: one instance serves one call at a time (ABI §4).
    unsafe { STATE.as_mut() }
}

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
    config_check_keys(config_ptr, config_len, &["min_p", "temperature"])?;
    let min_p = config_f64("min_p")?.unwrap_or(0.05);
    if !(0.0..=1.0).contains(&min_p) {
        return Err(config_error("min_p", "must be in [0, 1]"));
    }
    let temperature = config_f64("temperature")?.unwrap_or(1.0);
    let n = n_vocab as usize;
    let (logits, ids, vals, probs) = match (alloc_slice(n), alloc_slice(n), alloc_slice(n), alloc_slice(n)) {
        (Some(l), Some(i), Some(v), Some(p)) => (l, i, v, p),
        _ => return Err(realizar::ERR_VOCAB),
    };
    let addr = logits.as_ptr() as usize as u32;
    // Safety: see state().
    let cut_below = ln_below(min_p);
    unsafe { STATE = Some(State { logits, ids, vals, probs, min_p, cut_below, temperature, rng: Rng::new(0) }) };
    Ok(addr)
}

/// A number a little below ln(p), for p in [0, 1]: Newton's method on
/// exp(y) = p from y = 0 (which converges from above), less 1e-6, far more
/// than exp's 2 ulp error. -Inf (no shortcut) for p under 1e-300, where
/// exp(y) underflows.
fn ln_below(p: f64) -> f64 {
    if p < 1e-300 {
        return f64::NEG_INFINITY;
    }
    let mut y = 0.0;
    for _ in 0..2000 {
        let next = y - 1.0 + p / exp(y);
        if y - next < 1e-12 {
            break;
        }
        y = next;
    }
    y - 1e-6
}

#[no_mangle]
pub extern "C" fn realizar_reset(seed: i64, _n_prompt: i32) -> i32 {
    match state() {
        Some(s) => {
            s.rng = Rng::new(seed as u64);
            0
        }
        None => realizar::ERR_STATE,
    }
}

#[no_mangle]
pub extern "C" fn realizar_sample(_prev: i32, count: i32) -> i32 {
    let s = match state() {
        Some(s) => s,
        None => return -1,
    };
    let logits = &s.logits[..(count.max(0) as usize).min(s.logits.len())];
    let m = max_logit(logits) as f64;
    let (cut, min_p) = (m + s.cut_below, s.min_p);
    let (ids, vals) = (&mut *s.ids, &mut *s.vals);
    let mut kept = 0;
    let mut keep = |id: usize, l: f32| {
        let x = l as f64;
        // NaN fails every comparison; the maximum is kept even when it is -Inf.
        if x == m || (x >= cut && exp(x - m) >= min_p) {
            ids[kept] = id as i32;
            vals[kept] = l;
            kept += 1;
        }
    };
    // Eight entries per loop iteration: a guest pays for every loop
    // iteration (ABI §6), and most entries fail the first comparison.
    let chunks = logits.chunks_exact(8);
    let tail = chunks.remainder();
    let whole = logits.len() - tail.len();
    for (c, chunk) in chunks.enumerate() {
        for (j, &l) in chunk.iter().enumerate() {
            keep(c * 8 + j, l);
        }
    }
    for (j, &l) in tail.iter().enumerate() {
        keep(whole + j, l);
    }
    if kept == 0 {
        realizar::log(realizar::LOG_ERROR, "min-p: no token to choose (every logit is NaN)");
        return -1;
    }
    let (ids, vals) = (&mut s.ids[..kept], &mut s.vals[..kept]);
    sort_candidates(ids, vals);
    if s.temperature <= 0.0 {
        return ids[0];
    }
    let sum = softmax(s.probs, vals, s.temperature);
    ids[draw(&s.probs[..kept], sum, s.rng.uniform())]
}
