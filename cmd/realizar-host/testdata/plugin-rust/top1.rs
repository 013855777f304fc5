#![no_std]

use realizar::{pack_init, ERR_VOCAB};

// The host writes the top candidate here each step: its id, then its logit.
static mut REGION: [i32; 2] = [0; 2];

realizar::marker!(sampler);

#[no_mangle]
pub extern "C" fn realizar_init(n_vocab: i32, _max_piece: i32, _config_ptr: i32, _config_len: i32) -> i64 {
    if n_vocab <= 0 {
        return ERR_VOCAB as i64;
    }
    pack_init(unsafe { REGION.as_ptr() } as u32, 1) // top-1 mode
}

#[no_mangle]
pub extern "C" fn realizar_reset(_seed: i64, _n_prompt: i32) -> i32 {
    0
}

#[no_mangle]
pub extern "C" fn realizar_sample(_prev: i32, count: i32) -> i32 {
    if count < 1 {
        return -1;
    }
    unsafe { REGION[0] }
}
