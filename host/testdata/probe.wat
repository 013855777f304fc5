;; meta: -kind sampler -name probe -version 1.0.0 -description "exercises imports; its tokens are a known function of seed, prompt and config"
;; token(step k) = (random_get u64 % n + k + offset + prompt[0]) % n, where
;; random_get is the host's RNG seeded with seed ^ abi.RandomGetSalt, offset
;; the one-digit config value "offset" (0 if absent) and k counts samples
;; since reset. Writes "probe init\n" to stdout at init.
;; Memory: 0 counter, 4 offset, 8 prompt[0], 12 n, 64 random bytes,
;; 128 config value, 256 iovec, 272 prompt buffer, 300 nwritten, 512 text.
(module
  (import "realizar" "config_get" (func $config_get (param i32 i32 i32 i32) (result i32)))
  (import "realizar" "prompt_get" (func $prompt_get (param i32 i32) (result i32)))
  (import "realizar" "vocab_size" (func $vocab_size (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 512) "probe init\n")
  (data (i32.const 540) "offset")
  (global $buf (mut i32) (i32.const 0))
  (func (export "realizar_abi_v1_sampler"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param $cp i32) (param $cl i32) (result i64)
    (local $old i32)
    (if (i32.ne (call $vocab_size) (local.get $n)) (then (return (i64.const -3))))
    (i32.store (i32.const 12) (local.get $n))
    (if (i32.ge_s (call $config_get (i32.const 540) (i32.const 6) (i32.const 128) (i32.const 16)) (i32.const 1))
      (then (i32.store (i32.const 4) (i32.sub (i32.load8_u (i32.const 128)) (i32.const 48)))))
    (i32.store (i32.const 256) (i32.const 512))
    (i32.store (i32.const 260) (i32.const 11))
    (drop (call $fd_write (i32.const 1) (i32.const 256) (i32.const 1) (i32.const 300)))
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 4)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (global.set $buf (i32.mul (local.get $old) (i32.const 65536)))
    (i64.extend_i32_u (global.get $buf)))
  (func (export "realizar_reset") (param $seed i64) (param $np i32) (result i32)
    (i32.store (i32.const 0) (i32.const 0))
    (i32.store (i32.const 8) (i32.const 0))
    (if (i32.gt_s (local.get $np) (i32.const 0))
      (then
        (drop (call $prompt_get (i32.const 272) (i32.const 1)))
        (i32.store (i32.const 8) (i32.load (i32.const 272)))))
    (i32.const 0))
  (func (export "realizar_sample") (param $prev i32) (param $count i32) (result i32)
    (local $n i32) (local $tok i32)
    (local.set $n (i32.load (i32.const 12)))
    (drop (call $random_get (i32.const 64) (i32.const 8)))
    (local.set $tok (i32.wrap_i64 (i64.rem_u (i64.load (i32.const 64)) (i64.extend_i32_u (local.get $n)))))
    (local.set $tok (i32.add (local.get $tok) (i32.load (i32.const 0))))
    (local.set $tok (i32.add (local.get $tok) (i32.load (i32.const 4))))
    (local.set $tok (i32.add (local.get $tok) (i32.load (i32.const 8))))
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
    (i32.rem_u (local.get $tok) (local.get $n)))
)
