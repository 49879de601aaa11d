-- A known cost planted in a timed touch (PLANT_NS): b:touch with a spin of
-- N ns per page after the stores (core/kernels.c's ft_touch_planted), so a
-- comparison's power is measured on real runs. Only as a side of AB, where
-- the pairs measure it; then both sides run the planted kernel (0 ns on
-- one): the plain kernel's pass 1 ran 14 % dearer than the planted one at
-- 1 ns on a KVM guest, a difference of the code's path, not of the cost.
local plant = {}

-- The knob of a script that plants (what: the pass it plants in).
function plant.knob(what)
  return { name = "PLANT_NS", kind = "plant_ns", default = 0, ab = true,
    desc = ("a known cost planted in %s: a spin of at least this many ns per page after the stores (a kernel of "
      .. "its own), to measure a comparison's power on real runs; only as one side of AB "
      .. "(AB=\"PLANT_NS=0 | PLANT_NS=60\"), refused in a plain run"):format(what) }
end

-- Why the knobs cannot plant (a plain run), or nil.
function plant.refused(cfg)
  if cfg.given.PLANT_NS and (cfg.AB or "") == "" then
    return ("PLANT_NS=%d: a planted cost only as one side of AB (AB=\"PLANT_NS=0 | PLANT_NS=%d\"), where the pairs "
      .. "measure it; a plain run would report it as the machine's"):format(cfg.PLANT_NS, cfg.PLANT_NS)
  end
end

-- The touch's extra argument: the side's spin when the run plants, else none.
function plant.spin(cfg)
  if (cfg.AB or ""):find("PLANT_NS", 1, true) then return cfg.PLANT_NS end
end

return plant
