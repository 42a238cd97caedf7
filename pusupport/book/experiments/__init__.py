"""One module per experiment (a page, or a notebook run once per data set): each defines
``EXPERIMENT``, and the drivers the page needs beyond :meth:`~pusupport.book.pages.Page.run`.
:mod:`pusupport.book.registry` finds them."""
