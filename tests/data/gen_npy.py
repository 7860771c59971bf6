"""Writes tests/data/npy/*.npy and *.npz with Debian's numpy (run once with
/usr/bin/python3; the outputs are committed). tests/io/test_npy.cpp checks the
values Ember reads and that Ember's save reproduces the C-order files bitwise."""
import os
import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")
os.makedirs(out, exist_ok=True)

def save(name, a):
    np.save(os.path.join(out, name + ".npy"), a)

# Values are chosen to be easy to state in C++: arange-based.
save("f32_2x3", np.arange(6, dtype="<f4").reshape(2, 3) * 0.5 - 1)
save("f64_4", np.array([1.5, -2.25, 1e300, -0.0], dtype="<f8"))
save("f16_3", np.array([0.5, -1.0, 65504.0], dtype="<f2"))
save("i32_2x2", np.array([[1, -2], [2**31 - 1, -2**31]], dtype="<i4"))
save("i64_3", np.array([2**62, -5, 7], dtype="<i8"))
save("u8_5", np.arange(251, 256, dtype="u1"))
save("i8_3", np.array([-128, 0, 127], dtype="i1"))
save("i16_3", np.array([-32768, 258, 32767], dtype="<i2"))
save("big_i16_3", np.array([-32768, 258, 32767], dtype=">i2"))
save("bool_4", np.array([True, False, False, True]))
save("scalar_f64", np.array(3.25))
save("empty_0x3", np.zeros((0, 3), dtype="<f4"))
save("big_f32_2x3", (np.arange(6, dtype="<f4").reshape(2, 3) * 0.5 - 1).astype(">f4"))
save("big_i64_3", np.array([2**62, -5, 7], dtype=">i8"))
save("fortran_f32_2x3", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3) * 0.5 - 1))
save("fortran_i32_2x3x4", np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4)))
# bfloat16 has no numpy dtype: '<V2' void, as np.save writes ml_dtypes.bfloat16.
save("bf16_as_v2_3", np.array([0x3F80, 0xC000, 0x4049], dtype="<u2").view("V2"))

a = np.arange(6, dtype="<f4").reshape(2, 3)
b = np.array([1, 2, 3], dtype="<i8")
np.savez(os.path.join(out, "stored.npz"), a=a, b=b)
np.savez_compressed(os.path.join(out, "deflated.npz"), a=a, b=b, z=np.zeros((100,), dtype="<f8"))
