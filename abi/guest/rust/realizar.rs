//! realizar: the Rust guest SDK for the realizar-host plugin ABI, versions 1
//! and 2 (abi/ABI.md; version 2 is §11). One file, `no_std`, no dependencies, so that plain `rustc`
//! builds it (Debian bookworm: `apt-get install rustc libstd-rust-dev-wasm32`):
//!
//! ```sh
//! rustc --edition 2021 --crate-type rlib --crate-name realizar --target wasm32-unknown-unknown \
//!       -C opt-level=2 -C panic=abort -o librealizar.rlib abi/guest/rust/realizar.rs
//! rustc --edition 2021 --crate-type cdylib --target wasm32-unknown-unknown -C opt-level=2 \
//!       -C panic=abort -C link-arg=-zstack-size=65536 -C link-arg=--strip-all \
//!       --extern realizar=librealizar.rlib -o policy.wasm policy.rs
//! ```
//!
//! It carries the contract's constants, its arithmetic (the RNG of §9.1,
//! [`exp`] of §9.2, the candidate order of §4.2, [`softmax`] and [`draw`] of
//! §9.3), the host imports of §7 ([`host`]), a bump allocator over linear
//! memory ([`alloc`]) and config readers. A policy that takes its
//! probabilities from these functions picks the same tokens as the C and Go
//! policies for the same logits, config and seed: rustc never fuses `a * b + c`
//! into one rounding, so no flag is needed for §9's "nothing fused".
//!
//! The arithmetic part also builds natively (`rustc --test`), which is how
//! abi/guest's Go test checks it against abi/testdata/determinism.json; the
//! host imports, the allocator and the panic handler exist only on wasm32.
#![cfg_attr(not(test), no_std)]

/// The ABI version this SDK implements (abi.Version).
pub const ABI_VERSION: i32 = 1;
/// The largest top_n realizar_init may ask for (abi.MaxTopN).
pub const MAX_TOP_N: i32 = 4096;
/// The largest hold-back or trim a stop policy may answer, 2^29 - 1 (abi.MaxStopN).
pub const MAX_STOP_N: i32 = 536_870_911;

/// Negative results of realizar_init, realizar_reset, realizar_process and
/// realizar_check (abi.ErrCode, ABI §10).
pub const ERR_FAILED: i32 = -1;
/// The config is invalid: the host reports ErrBadConfig.
pub const ERR_CONFIG: i32 = -2;
/// The policy cannot work with this n_vocab or max_piece.
pub const ERR_VOCAB: i32 = -3;
/// Called out of order.
pub const ERR_STATE: i32 = -4;
/// ABI 2: the host did not announce a feature the policy needs.
pub const ERR_FEATURE: i32 = -5;

/// Stop actions (abi.StopAction): go on, holding back n bytes.
pub const STOP_CONTINUE: i32 = 0;
/// Stop and keep the text (n is 0).
pub const STOP_KEEP: i32 = 1;
/// Stop and remove the last n bytes of the text.
pub const STOP_TRIM: i32 = 2;

/// Log levels of the log host function (abi.LogDebug..abi.LogError).
pub const LOG_DEBUG: i32 = 0;
/// Informational.
pub const LOG_INFO: i32 = 1;
/// A warning.
pub const LOG_WARN: i32 = 2;
/// An error: the host quotes the last line when the plugin fails.
pub const LOG_ERROR: i32 = 3;

/// Exp's range (abi.ExpMax, abi.ExpMin): above, +Inf; below, 0.
pub const EXP_MAX: f64 = 709.0;
/// See [`EXP_MAX`].
pub const EXP_MIN: f64 = -708.0;

/// Salt of the WASI random_get stream (abi.RandomGetSalt).
pub const RANDOM_GET_SALT: u64 = 0x7261_6e64_6f6d_2d31;

/// realizar_init's answer (abi.PackInit): the input region's address in bits
/// 0-31, top_n (0 = full logits, 1..=MAX_TOP_N candidates) in bits 32-44.
pub fn pack_init(addr: u32, top_n: i32) -> i64 {
    addr as i64 | (((top_n & 0x1fff) as i64) << 32)
}

/// realizar_check's answer (abi.PackStop): n << 2 | action.
pub fn pack_stop(action: i32, n: i32) -> i32 {
    ((n as u32) << 2) as i32 | action
}

// ---- ABI 2 (§11) ----
//
// realizar_init gains a fifth argument, the host's features:
//   extern "C" fn realizar_init(n_vocab: i32, max_piece: i32, config_ptr: i32,
//                               config_len: i32, features: i64) -> i64
// and realizar_sample / realizar_process receive (n_accepted, count).

/// ABI version 2 (abi.Version2).
pub const ABI_VERSION2: i32 = 2;
/// Feature bits the host announces (abi.Feature): the mask output mode.
pub const FEATURE_MASK: i64 = 1;
/// The token_attrs import.
pub const FEATURE_TOKEN_ATTRS: i64 = 2;
/// n_accepted and the accepted_get import.
pub const FEATURE_ACCEPTED: i64 = 4;
/// A processor's output mode (abi.Output): v1's edits.
pub const OUTPUT_EDITS: i32 = 0;
/// The allowed-token mask, returned by address from realizar_process.
pub const OUTPUT_MASK: i32 = 1;
/// Token attribute flags (abi.TokenAttr); the piece length is bits 8..31.
pub const ATTR_EOG: u32 = 1;
/// A control or unknown token.
pub const ATTR_CONTROL: u32 = 2;
/// A byte-fallback token.
pub const ATTR_BYTE: u32 = 4;

/// A v2 realizar_init answer (abi.PackInitV2); a mask-mode processor
/// answers `pack_init_v2(0, 0, OUTPUT_MASK)`.
pub fn pack_init_v2(addr: u32, top_n: i32, output: i32) -> i64 {
    pack_init(addr, top_n) | (((output & 3) as i64) << 45)
}

/// The piece length carried by a token attribute word.
pub fn attr_piece_len(attr: u32) -> i32 {
    (attr >> 8) as i32
}

/// Words of an allowed-token mask over n_vocab tokens (abi.MaskWords).
pub fn mask_words(n_vocab: i32) -> usize {
    ((n_vocab as usize) + 31) / 32
}

/// Sets token id's bit in mask (bit id%32 of word id/32 allows it).
pub fn mask_allow(mask: &mut [u32], id: i32) {
    mask[(id >> 5) as usize] |= 1 << (id & 31);
}

/// Clears token id's bit.
pub fn mask_deny(mask: &mut [u32], id: i32) {
    mask[(id >> 5) as usize] &= !(1u32 << (id & 31));
}

/// Whether token id's bit is set.
pub fn mask_allows(mask: &[u32], id: i32) -> bool {
    mask[(id >> 5) as usize] >> (id & 31) & 1 != 0
}

/// Defines the ABI 2 marker export, `realizar_abi_v2_<kind>` (ABI §11.1).
#[macro_export]
macro_rules! marker_v2 {
    (sampler) => {
        #[no_mangle]
        pub extern "C" fn realizar_abi_v2_sampler() {}
    };
    (processor) => {
        #[no_mangle]
        pub extern "C" fn realizar_abi_v2_processor() {}
    };
    (stop) => {
        #[no_mangle]
        pub extern "C" fn realizar_abi_v2_stop() {}
    };
}

/// Defines the kind marker export, `realizar_abi_v1_<kind>` (ABI §2):
/// `realizar::marker!(sampler);`, `processor` or `stop`.
#[macro_export]
macro_rules! marker {
    (sampler) => {
        #[no_mangle]
        pub extern "C" fn realizar_abi_v1_sampler() {}
    };
    (processor) => {
        #[no_mangle]
        pub extern "C" fn realizar_abi_v1_processor() {}
    };
    (stop) => {
        #[no_mangle]
        pub extern "C" fn realizar_abi_v1_stop() {}
    };
}

/// Defines the optional `realizar_alloc` export (ABI §4.1) over [`alloc`],
/// so that realizar_init receives the config's JSON text (for
/// [`config_check_keys`]).
#[macro_export]
macro_rules! alloc_export {
    () => {
        #[no_mangle]
        pub extern "C" fn realizar_alloc(size: i32) -> i32 {
            $crate::alloc(if size > 0 { size as usize } else { 1 }) as usize as i32
        }
    };
}

// ---- §9.1 RNG: xoshiro256** seeded by SplitMix64 ----

/// The contract RNG (abi.RNG): xoshiro256** whose state is the first four
/// outputs of SplitMix64 started at the seed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The RNG a sampler creates at each realizar_reset from its seed.
    pub fn new(seed: u64) -> Rng {
        let mut s = [0u64; 4];
        let mut x = seed;
        for v in s.iter_mut() {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *v = z ^ (z >> 31);
        }
        Rng { s }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// An f64 in [0, 1): the top 53 bits of the next output times 2^-53 (exact).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * f64::from_bits(0x3ca0_0000_0000_0000)
    }
}

// ---- §9.2 Exp ----

/// 1/n! for n = 2..=13, as the bit patterns of ABI §9.2's c_2..c_13
/// (rustc 1.63 has no hexadecimal float literals and no const from_bits).
const EXP_COEF: [u64; 12] = [
    0x3fe0_0000_0000_0000,
    0x3fc5_5555_5555_5555,
    0x3fa5_5555_5555_5555,
    0x3f81_1111_1111_1111,
    0x3f56_c16c_16c1_6c17,
    0x3f2a_01a0_1a01_a01a,
    0x3efa_01a0_1a01_a01a,
    0x3ec7_1de3_a556_c734,
    0x3e92_7e4f_b778_9f5c,
    0x3e5a_e645_67f5_44e4,
    0x3e21_eed8_eff8_d898,
    0x3de6_1246_13a8_6d09,
];

/// The contract's exponential (abi.Exp, ABI §9.2): NaN for NaN, +Inf above
/// [`EXP_MAX`], 0 below [`EXP_MIN`], otherwise within 2 ulp of e^x and the
/// same bits as every other SDK.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > EXP_MAX {
        return f64::INFINITY;
    }
    if x < EXP_MIN {
        return 0.0;
    }
    let log2e = f64::from_bits(0x3ff7_1547_652b_82fe);
    let ln2_hi = f64::from_bits(0x3fe6_2e42_fee0_0000);
    let ln2_lo = f64::from_bits(0x3dea_39ef_3579_3c76);
    let t = x * log2e;
    // `as` truncates toward zero, as the contract's trunc.
    let k = if t >= 0.0 { (t + 0.5) as i32 } else { (t - 0.5) as i32 };
    let kf = k as f64;
    let r = (x - kf * ln2_hi) - kf * ln2_lo;
    let mut p = f64::from_bits(EXP_COEF[11]);
    for c in EXP_COEF[..11].iter().rev() {
        p = p * r + f64::from_bits(*c);
    }
    p = p * r + 1.0;
    p = p * r + 1.0;
    p * f64::from_bits(((k + 1023) as u64) << 52)
}

// ---- §4.2 order, §9.3 softmax and draw ----

/// Whether (id_a, logit_a) sorts before (id_b, logit_b) in the contract
/// order (abi.Before): logit descending, id ascending, NaN after everything.
pub fn before(id_a: i32, logit_a: f32, id_b: i32, logit_b: f32) -> bool {
    let (nan_a, nan_b) = (logit_a.is_nan(), logit_b.is_nan());
    if nan_a != nan_b {
        return nan_b;
    }
    if !nan_a && logit_a != logit_b {
        return logit_a > logit_b;
    }
    id_a < id_b
}

/// Sorts (ids[i], logits[i]) pairs into the contract order, in place
/// (abi.SortCandidates): a heapsort, O(n log n) with no allocation. Any
/// correct sort gives the same result, since the order is total.
/// logits must be at least as long as ids.
pub fn sort_candidates(ids: &mut [i32], logits: &mut [f32]) {
    let n = ids.len();
    let logits = &mut logits[..n];
    for root in (0..n / 2).rev() {
        sift_down(ids, logits, root, n);
    }
    for end in (1..n).rev() {
        ids.swap(0, end);
        logits.swap(0, end);
        sift_down(ids, logits, 0, end);
    }
}

fn sift_down(ids: &mut [i32], logits: &mut [f32], mut root: usize, n: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= n {
            return;
        }
        if child + 1 < n && before(ids[child], logits[child], ids[child + 1], logits[child + 1]) {
            child += 1;
        }
        if !before(ids[root], logits[root], ids[child], logits[child]) {
            return;
        }
        ids.swap(root, child);
        logits.swap(root, child);
        root = child;
    }
}

/// Unnormalised probabilities of logits already in contract order, at
/// temperature temp > 0, into probs[..logits.len()]; returns their sum
/// (abi.Softmax, ABI §9.3). A NaN logit gets 0; when the first logit is
/// -Inf or NaN every probability is 0 and so is the sum.
pub fn softmax(probs: &mut [f64], logits: &[f32], temp: f64) -> f64 {
    let probs = &mut probs[..logits.len()];
    if logits.is_empty() {
        return 0.0;
    }
    let m = logits[0] as f64;
    if m.is_nan() || m == f64::NEG_INFINITY {
        probs.iter_mut().for_each(|p| *p = 0.0);
        return 0.0;
    }
    let mut sum = 0.0;
    for (p, &l) in probs.iter_mut().zip(logits) {
        *p = if l.is_nan() { 0.0 } else { exp((l as f64 - m) / temp) };
        sum += *p;
    }
    sum
}

/// Picks an index of probs with u from [`Rng::uniform`] (abi.Draw, ABI
/// §9.3): the first i where the running sum exceeds u·sum, else the last i
/// with probs[i] > 0 (0 if none).
pub fn draw(probs: &[f64], sum: f64, u: f64) -> usize {
    let target = u * sum;
    let mut cum = 0.0;
    let mut last = 0;
    for (i, &p) in probs.iter().enumerate() {
        cum += p;
        if target < cum {
            return i;
        }
        if p > 0.0 {
            last = i;
        }
    }
    last
}

// ---- JSON: numbers and the top-level keys of an object ----

/// Parses a whole JSON number (the text config_get gives for a number) as an
/// f64, correctly rounded like Go's strconv.ParseFloat. None for anything
/// that is not a finite JSON number ("inf", "nan", "0x1p3" and the like are
/// refused, although Rust's parser would take them).
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let digits = match s.first() {
        Some(b'-') => &s[1..],
        _ => s,
    };
    if !digits.first().map_or(false, u8::is_ascii_digit) {
        return None;
    }
    if !s.iter().all(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')) {
        return None;
    }
    let v: f64 = core::str::from_utf8(s).ok()?.parse().ok()?;
    if v.is_finite() {
        Some(v)
    } else {
        None
    }
}

/// Parses a whole JSON number as an i32: an integer (no fraction, no
/// exponent) in i32's range. None for anything else.
pub fn parse_i32(s: &[u8]) -> Option<i32> {
    if s.is_empty() || s[0] == b'+' {
        return None;
    }
    core::str::from_utf8(s).ok()?.parse().ok()
}

/// Calls f with each top-level member of the JSON object s, as the key's
/// raw bytes between the quotes (escapes left as written) and the value's
/// JSON text. The host has already checked that the config is valid JSON,
/// so this scanner only finds the boundaries. Returns false, having stopped,
/// when s is not an object or f returns false.
pub fn object_members<'a>(s: &'a [u8], mut f: impl FnMut(&'a [u8], &'a [u8]) -> bool) -> bool {
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'{') {
        return false;
    }
    i = skip_ws(s, i + 1);
    if s.get(i) == Some(&b'}') {
        return true;
    }
    loop {
        if s.get(i) != Some(&b'"') {
            return false;
        }
        let key_end = skip_string(s, i);
        let key = &s[i + 1..key_end - 1];
        i = skip_ws(s, key_end);
        if s.get(i) != Some(&b':') {
            return false;
        }
        let start = skip_ws(s, i + 1);
        let end = skip_value(s, start);
        if end == start || !f(key, &s[start..end]) {
            return false;
        }
        i = skip_ws(s, end);
        match s.get(i) {
            Some(b',') => i = skip_ws(s, i + 1),
            Some(b'}') => return true,
            _ => return false,
        }
    }
}

/// Calls f with the JSON text of each element of the array s. Returns
/// false, having stopped, when s is not an array or f returns false.
pub fn array_elements<'a>(s: &'a [u8], mut f: impl FnMut(&'a [u8]) -> bool) -> bool {
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'[') {
        return false;
    }
    i = skip_ws(s, i + 1);
    if s.get(i) == Some(&b']') {
        return true;
    }
    loop {
        let end = skip_value(s, i);
        if end == i || !f(&s[i..end]) {
            return false;
        }
        i = skip_ws(s, end);
        match s.get(i) {
            Some(b',') => i = skip_ws(s, i + 1),
            Some(b']') => return true,
            _ => return false,
        }
    }
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The index after the string that starts with the quote at s[i].
fn skip_string(s: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// The index after the value that starts at s[i] (i itself when none does).
fn skip_value(s: &[u8], i: usize) -> usize {
    match s.get(i) {
        None => i,
        Some(b'"') => skip_string(s, i),
        Some(b'{') | Some(b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < s.len() {
                match s[j] {
                    b'"' => {
                        j = skip_string(s, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            s.len()
        }
        Some(_) => {
            let mut j = i;
            while j < s.len() && !matches!(s[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            j
        }
    }
}

// ---- wasm32 only: allocator, host functions, config readers, panics ----

#[cfg(target_arch = "wasm32")]
pub use wasm::*;

#[cfg(target_arch = "wasm32")]
mod wasm {
    use core::arch::wasm32::{memory_grow, memory_size};

    const PAGE: usize = 65536;

    /// The next free byte of the bump allocator; 0 before the first alloc.
    static mut HEAP_TOP: usize = 0;

    /// A block of size bytes, 16-byte aligned and zeroed, past everything the
    /// module's data and stack use; memory grows as needed. Blocks are never
    /// freed (a policy allocates at realizar_init). A null pointer when the
    /// host's page cap refuses the growth.
    pub fn alloc(size: usize) -> *mut u8 {
        // Safety: one instance runs one call at a time (ABI §4), so nothing
        // else touches HEAP_TOP meanwhile.
        unsafe {
            if HEAP_TOP == 0 {
                HEAP_TOP = memory_size(0) * PAGE;
            }
            let start = (HEAP_TOP + 15) & !15;
            let end = match start.checked_add(size) {
                Some(e) => e,
                None => return core::ptr::null_mut(),
            };
            let have = memory_size(0) * PAGE;
            if end > have && memory_grow(0, (end - have + PAGE - 1) / PAGE) == usize::MAX {
                return core::ptr::null_mut();
            }
            HEAP_TOP = end;
            start as *mut u8
        }
    }

    /// A zeroed `[T; n]` from [`alloc`], for plain numbers (i32, f32, f64,
    /// u8). None when memory cannot grow that far.
    pub fn alloc_slice<T: Copy>(n: usize) -> Option<&'static mut [T]> {
        let bytes = n.checked_mul(core::mem::size_of::<T>())?;
        let p = alloc(bytes);
        if p.is_null() {
            return None;
        }
        // Safety: fresh memory (zero, as grown pages are) that nothing else
        // refers to, aligned to 16 >= align_of::<T>() for numbers.
        Some(unsafe { core::slice::from_raw_parts_mut(p as *mut T, n) })
    }

    /// The host functions of ABI §7 (module "realizar"), raw.
    pub mod host {
        #[link(wasm_import_module = "realizar")]
        extern "C" {
            /// Copies top-level config key's value into buf; its true length, or -1 if absent.
            pub fn config_get(key: *const u8, key_len: i32, buf: *mut u8, limit: i32) -> i32;
            /// n_vocab.
            pub fn vocab_size() -> i32;
            /// Copies token id's bytes into buf; the true length, or -1 for an id out of range.
            pub fn vocab_piece(id: i32, buf: *mut u8, limit: i32) -> i32;
            /// Copies the prompt's tokens during realizar_reset; their number.
            pub fn prompt_get(buf: *mut i32, limit: i32) -> i32;
            /// Appends "[level] msg" to the instance's log.
            pub fn log(level: i32, msg: *const u8, len: i32);
            /// Monotonic nanoseconds since the instance was created.
            pub fn clock_ns() -> i64;
            /// ABI 2: the attribute words of ids first.. (min(count, n_vocab-first)
            /// of them, returned), -1 for first out of range.
            pub fn token_attrs(first: i32, buf: *mut u32, count: i32) -> i32;
            /// ABI 2: during a step call, copies the tokens accepted since the
            /// previous one; their number.
            pub fn accepted_get(buf: *mut i32, limit: i32) -> i32;
        }
    }

    /// Appends msg to the instance's log at level ([`LOG_ERROR`](super::LOG_ERROR)...).
    pub fn log(level: i32, msg: &str) {
        // Safety: the host reads msg.len() bytes at msg's address, inside memory.
        unsafe { host::log(level, msg.as_ptr(), msg.len() as i32) }
    }

    /// The value of top-level config key (a string decoded, anything else as
    /// compact JSON) copied into buf: Some(the bytes) when present, None
    /// when absent. A value longer than buf is an error: logged, ERR_CONFIG.
    pub fn config_raw<'a>(key: &str, buf: &'a mut [u8]) -> Result<Option<&'a [u8]>, i32> {
        // Safety: both ranges lie inside this module's memory.
        let n = unsafe { host::config_get(key.as_ptr(), key.len() as i32, buf.as_mut_ptr(), buf.len() as i32) };
        if n < 0 {
            return Ok(None);
        }
        if n as usize > buf.len() {
            config_error(key, "is too long");
            return Err(super::ERR_CONFIG);
        }
        Ok(Some(&buf[..n as usize]))
    }

    /// Config key as a finite number: Ok(None) when absent, ERR_CONFIG
    /// (logged, naming key) when it is not a number.
    pub fn config_f64(key: &str) -> Result<Option<f64>, i32> {
        let mut buf = [0u8; 64];
        match config_raw(key, &mut buf)? {
            None => Ok(None),
            Some(v) => super::parse_f64(v).map(Some).ok_or_else(|| config_error(key, "must be a number")),
        }
    }

    /// Config key as an i32: Ok(None) when absent, ERR_CONFIG (logged,
    /// naming key) when it is not an integer in i32's range.
    pub fn config_i32(key: &str) -> Result<Option<i32>, i32> {
        let mut buf = [0u8; 64];
        match config_raw(key, &mut buf)? {
            None => Ok(None),
            Some(v) => super::parse_i32(v).map(Some).ok_or_else(|| config_error(key, "must be an integer")),
        }
    }

    /// Logs "config: KEY WHAT" as an error and returns ERR_CONFIG.
    pub fn config_error(key: &str, what: &str) -> i32 {
        log_parts(super::LOG_ERROR, &["config: ", key, " ", what]);
        super::ERR_CONFIG
    }

    /// Logs the concatenation of parts (up to 512 bytes) as one line.
    fn log_parts(level: i32, parts: &[&str]) {
        let mut line = [0u8; 512];
        let mut n = 0;
        for part in parts {
            let b = part.as_bytes();
            let take = b.len().min(line.len() - n);
            line[n..n + take].copy_from_slice(&b[..take]);
            n += take;
        }
        // Safety: line[..n] lies inside memory.
        unsafe { host::log(level, line.as_ptr(), n as i32) };
    }

    /// Refuses a config with a top-level key not in known: cfg is the config
    /// JSON as realizar_init receives it (config_ptr, config_len; the policy
    /// uses [`alloc_export!`](crate::alloc_export) so that the host passes it).
    /// Ok for an empty config; otherwise ERR_CONFIG after logging
    /// "config: unknown key KEY (the keys are A, B, C)", the line of the C
    /// and Go SDKs.
    pub fn config_check_keys(config_ptr: i32, config_len: i32, known: &[&str]) -> Result<(), i32> {
        if config_len <= 0 {
            return Ok(());
        }
        // Safety: the host wrote config_len bytes at config_ptr (ABI §4.1).
        let cfg = unsafe { core::slice::from_raw_parts(config_ptr as usize as *const u8, config_len as usize) };
        let mut bad: &[u8] = &[];
        let ok = super::object_members(cfg, |key, _| {
            if known.iter().any(|k| k.as_bytes() == key) {
                return true;
            }
            bad = key;
            false
        });
        if ok {
            return Ok(());
        }
        let mut parts: [&str; 2 + 2 * 16 + 1] = [""; 35];
        parts[0] = "config: unknown key ";
        parts[1] = core::str::from_utf8(bad).unwrap_or("?");
        let mut n = 2;
        for (i, k) in known.iter().take(16).enumerate() {
            parts[n] = if i == 0 { " (the keys are " } else { ", " };
            parts[n + 1] = k;
            n += 2;
        }
        parts[n] = ")";
        log_parts(super::LOG_ERROR, &parts[..n + 1]);
        Err(super::ERR_CONFIG)
    }

    #[cfg(not(test))]
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        // A panic is a bug in the policy: trap, which the host reports as
        // ErrPluginTrap and answers by discarding the instance.
        core::arch::wasm32::unreachable()
    }
}
