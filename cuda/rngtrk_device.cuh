/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rngtrk_device.cuh: rngtrk's bits inside your own CUDA kernels.
 *
 * Inline __host__ __device__ functions: Philox4x32-10, the layouts (which
 * counter and unit element g of a tensor uses), and the element transforms
 * of every distribution.  They are the very functions librngtrk's CPU and
 * CUDA paths run, so a fused kernel (a custom dropout, say) computes exactly
 * the library's values.  `make install` puts a single-file copy of this
 * header (with the pieces below pasted in) next to rngtrk.h.
 *
 *   unsigned c;
 *   rngtrk::PhiloxBlock w = rngtrk::element_block<rngtrk::Layout::stateless>(seed, offset, g, 4, 0, &c);
 *   bool kept = rngtrk::keep<rngtrk::Layout::stateless>(w.w[c], 0.9f);
 *
 * docs/cuda.md has a complete kernel.  Compile with --fmad=false, so that
 * nvcc does not fuse multiplies and adds that the library keeps apart.
 */
#pragma once

#include "hd.h"
#include "philox.h"
#include "det_math.h"
#include "uniform_words.h"
#include "sample_kinds.h"
#include "elements.h"
#include "layouts.h"
