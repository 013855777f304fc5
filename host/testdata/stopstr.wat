;; meta: -kind stop -name stopstr -version 1.0.0 -description "stops at config \"stop\" (up to 32 bytes) and trims it, holding back partial matches"
;; Bytes are fed one at a time into a 64-byte history. When the history ends
;; with the stop string: StopTrim(len(stop) + bytes of this piece after the
;; match). After the piece: Continue with hold-back = the longest proper
;; prefix of the stop string that ends the history.
;; Memory: 0 slen, 4 hlen, 64 "stop", 128 stop string, 256 history (64),
;; 1024 input region (max_piece bytes; grown at init if needed).
(module
  (import "realizar" "config_get" (func $config_get (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "stop")
  (func (export "realizar_abi_v1_stop"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param $cp i32) (param $cl i32) (result i64)
    (local $len i32)
    (local.set $len (call $config_get (i32.const 64) (i32.const 4) (i32.const 128) (i32.const 32)))
    (if (i32.or (i32.lt_s (local.get $len) (i32.const 1)) (i32.gt_s (local.get $len) (i32.const 32)))
      (then (return (i64.const -2))))
    (i32.store (i32.const 0) (local.get $len))
    (if (i32.gt_u (i32.add (local.get $maxp) (i32.const 1024)) (i32.const 65536))
      (then (if (i32.lt_s (memory.grow
          (i32.div_u (i32.add (local.get $maxp) (i32.const 65535)) (i32.const 65536))) (i32.const 0))
        (then (return (i64.const -3))))))
    (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32)
    (i32.store (i32.const 4) (i32.const 0))
    (i32.const 0))
  ;; $ends_with(k): the last k history bytes equal stop[0:k].
  (func $ends_with (param $k i32) (result i32)
    (local $i i32) (local $h i32)
    (local.set $h (i32.sub (i32.add (i32.const 256) (i32.load (i32.const 4))) (local.get $k)))
    (block $no (loop $next
      (br_if $no (i32.ge_u (local.get $i) (local.get $k)))
      (if (i32.ne (i32.load8_u (i32.add (local.get $h) (local.get $i)))
                  (i32.load8_u (i32.add (i32.const 128) (local.get $i))))
        (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.const 1))
  (func (export "realizar_check") (param $tok i32) (param $len i32) (result i32)
    (local $i i32) (local $hlen i32) (local $slen i32) (local $k i32)
    (local.set $slen (i32.load (i32.const 0)))
    (block $done (loop $byte
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (local.set $hlen (i32.load (i32.const 4)))
      (if (i32.eq (local.get $hlen) (i32.const 64))
        (then
          (memory.copy (i32.const 256) (i32.const 257) (i32.const 63))
          (local.set $hlen (i32.const 63))))
      (i32.store8 (i32.add (i32.const 256) (local.get $hlen)) (i32.load8_u (i32.add (i32.const 1024) (local.get $i))))
      (i32.store (i32.const 4) (i32.add (local.get $hlen) (i32.const 1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (if (i32.ge_u (i32.load (i32.const 4)) (local.get $slen))
        (then (if (call $ends_with (local.get $slen))
          (then (return (i32.or (i32.shl
            (i32.add (local.get $slen) (i32.sub (local.get $len) (local.get $i))) (i32.const 2)) (i32.const 2)))))))
      (br $byte)))
    ;; hold back the longest proper prefix of stop that ends the history
    (local.set $k (i32.sub (local.get $slen) (i32.const 1)))
    (if (i32.gt_u (local.get $k) (i32.load (i32.const 4))) (then (local.set $k (i32.load (i32.const 4)))))
    (block $found (loop $try
      (br_if $found (i32.eqz (local.get $k)))
      (br_if $found (call $ends_with (local.get $k)))
      (local.set $k (i32.sub (local.get $k) (i32.const 1)))
      (br $try)))
    (i32.shl (local.get $k) (i32.const 2)))
)
