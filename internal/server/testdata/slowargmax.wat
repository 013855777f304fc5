;; meta: -kind sampler -name slowargmax -version 1.0.0 -description "argmax after spinning 10 ms of realizar.clock_ns"
;; For the server's client-disconnect test: each decode step spins until
;; realizar.clock_ns has advanced 10 ms, so a turn of 240 tokens cannot
;; finish into the socket's buffers before the client goes away, however
;; fast the machine, and stays well inside the tenant's step deadline
;; however slow the build (a fixed count of iterations took over 2 s a
;; step under -race).
(module
  (import "realizar" "clock_ns" (func $clock_ns (result i64)))
  (memory (export "memory") 1)
  (global $buf (mut i32) (i32.const 0))
  (func (export "realizar_abi_v1_sampler"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param $cp i32) (param $cl i32) (result i64)
    (local $old i32)
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 4)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (global.set $buf (i32.mul (local.get $old) (i32.const 65536)))
    (i64.extend_i32_u (global.get $buf)))
  (func (export "realizar_reset") (param i64 i32) (result i32)
    (i32.const 0))
  (func (export "realizar_sample") (param $prev i32) (param $count i32) (result i32)
    (local $i i32) (local $best i32) (local $bv f32) (local $v f32) (local $end i64)
    (local.set $end (i64.add (call $clock_ns) (i64.const 10000000)))
    (block $spun (loop $spin
      (br_if $spun (i64.ge_u (call $clock_ns) (local.get $end)))
      (br $spin)))
    (local.set $bv (f32.load (global.get $buf)))
    (local.set $i (i32.const 1))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
      (local.set $v (f32.load (i32.add (global.get $buf) (i32.shl (local.get $i) (i32.const 2)))))
      (if (f32.gt (local.get $v) (local.get $bv))
        (then (local.set $bv (local.get $v)) (local.set $best (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (local.get $best))
)
