"use strict";
// transform panel (see PANELS in app.js)
