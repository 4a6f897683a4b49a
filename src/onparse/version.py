"""onparse's version, in a module of its own: the modules that record it in their files import it
from here, not from the package, whose ``__init__`` reaches the API lazily (an import of the
package from inside the library would close a loop through it)."""

__version__ = "0.1.0"
