;; meta: -kind sampler -name iovbomb -version 1.0.0 -description "fd_write with guest-chosen iovec counts: 2,000,000 of 64 KiB in one call (seed 0), or 1024 per call forever (seed 1)"
;; Issue 19's long host call. init fills 2,000,000 iovecs at 65536, each
;; {ptr 0, len 65536}: one fd_write over them all would copy gigabytes
;; into the log inside a single host call, where wazero's deadline checks
;; do not run. Seed 0: sample answers fd_write's errno for them all (as
;; the token). Seed 1: sample calls fd_write with 1024 of them forever.
;; Input region at 1024 (full logits of a small vocabulary).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 258)
  (global $mode (mut i64) (i64.const 0))
  (func (export "realizar_abi_v1_sampler"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (local $i i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (i32.const 2000000)))
      (i32.store (i32.add (i32.const 65536) (i32.shl (local.get $i) (i32.const 3))) (i32.const 0))
      (i32.store (i32.add (i32.const 65540) (i32.shl (local.get $i) (i32.const 3))) (i32.const 65536))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i64.const 1024))
  (func (export "realizar_reset") (param $seed i64) (param i32) (result i32)
    (global.set $mode (local.get $seed))
    (i32.const 0))
  (func (export "realizar_sample") (param $prev i32) (param $count i32) (result i32)
    (if (i64.eqz (global.get $mode))
      (then (return (call $fd_write (i32.const 1) (i32.const 65536) (i32.const 2000000) (i32.const 8)))))
    (loop $again
      (drop (call $fd_write (i32.const 1) (i32.const 65536) (i32.const 1024) (i32.const 8)))
      (br $again))
    (i32.const 0))
)
