;; meta: -kind processor -name spin -version 1.0.0 -description "edits nothing after spinning 150 ms of realizar.clock_ns per step"
;; For the whole-step deadline: each step spins until realizar.clock_ns has
;; advanced 150 ms (a host call per iteration, so the host's deadline checks
;; run too), then returns no edits. Two of them in one chain take 300 ms a
;; step, each well within a 250 ms per-call deadline.
(module
  (import "realizar" "clock_ns" (func $clock_ns (result i64)))
  (memory (export "memory") 1)
  (global $buf (mut i32) (i32.const 0))
  (func (export "realizar_abi_v1_processor"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (local $old i32)
    ;; input n*4 bytes, output n*8 bytes
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 12)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (global.set $buf (i32.mul (local.get $old) (i32.const 65536)))
    (i64.extend_i32_u (global.get $buf)))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_process") (param $prev i32) (param $count i32) (result i32)
    (local $end i64)
    (local.set $end (i64.add (call $clock_ns) (i64.const 150000000)))
    (block $done (loop $spin
      (br_if $done (i64.ge_u (call $clock_ns) (local.get $end)))
      (br $spin)))
    (i32.const 0))
)
