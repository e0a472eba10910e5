// Stands in for a layer that has no sources yet, so every layer is a library target.
