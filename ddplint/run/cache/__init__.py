"""`.ddplint_cache/`: findings and parsed modules kept between runs."""
