"""CACHE-FLOOR: a harness run whose own prompt-cache hit ratio h_r, over its result lines, is below the
fleet floor h_fleet = 0.9867 (#235, #241; docs/loop.md, "The h_fleet floor")."""
