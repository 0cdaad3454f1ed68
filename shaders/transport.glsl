// transport.glsl: the maths of one substep of density transport, shared by
// the fragment backend's two passes (advect_ratio, advect_density) and the
// compute backend's one-dispatch substep (transport_tile). Mirrors flux_x,
// advect_ratio and advect_apply in src/cpu_solver.c.
//
// A face flux is k·a·ρ_face with k = dt_sub/h, a the face speed within
// ±umax (the solver passes method_transport_cap, 1.5x the speed limit: the
// projected flow as it is, a guard only), and ρ_face the upwind density with a minmod-limited slope. A
// cell's positivity ratio min(1, ρ / outflow) scales every flux it donates,
// so ρ stays ≥ 0, and every flux leaves one cell exactly as it enters the
// next: Σρ is conserved.

float transport_minmod(float a, float b)
{
    if (a > 0.0 && b > 0.0) return min(a, b);
    if (a < 0.0 && b < 0.0) return max(a, b);
    return 0.0;
}

// The flux through a face with speed a (before clamping) whose four cells
// along the axis hold r0 r1 | r2 r3: upwind from r1 (a > 0) or r2.
float transport_flux(float k, float umax, float a, float r0, float r1, float r2, float r3)
{
    a = clamp(a, -umax, umax);
    if (a == 0.0) return 0.0;
    float f = a > 0.0 ? r1 + 0.5 * transport_minmod(r1 - r0, r2 - r1)
                      : r2 - 0.5 * transport_minmod(r2 - r1, r3 - r2);
    return k * a * f;
}

// A cell's positivity ratio from its density and the fluxes through its
// left, right, bottom and top faces (positive: towards +x or +y).
float transport_ratio(float rc, float fl, float fr, float fb, float ft)
{
    float out_ = 0.0;
    if (fl < 0.0) out_ -= fl;
    if (fr > 0.0) out_ += fr;
    if (fb < 0.0) out_ -= fb;
    if (ft > 0.0) out_ += ft;
    return out_ > rc ? rc / out_ : 1.0;
}

// The cell's new density: each face's flux scaled by its donor's ratio (rc
// its own, rl rr rb rt its left, right, bottom and top neighbours').
float transport_apply(float r, float fl, float fr, float fb, float ft, float rc, float rl, float rr,
                      float rb, float rt)
{
    if (fl != 0.0) r += fl * (fl > 0.0 ? rl : rc);
    if (fr != 0.0) r -= fr * (fr > 0.0 ? rc : rr);
    if (fb != 0.0) r += fb * (fb > 0.0 ? rb : rc);
    if (ft != 0.0) r -= ft * (ft > 0.0 ? rc : rt);
    return max(r, 0.0);
}

// A cell's transport speed from its left, right, bottom and top face speeds,
// each axis clamped to cap: |c_x| + |c_y| over k. The substeps of a stage
// follow the largest (method_cell_speed in src/method.h).
float transport_cell_speed(float ul, float ur, float vb, float vt, float cap)
{
    return min(max(abs(ul), abs(ur)), cap) + min(max(abs(vb), abs(vt)), cap);
}
