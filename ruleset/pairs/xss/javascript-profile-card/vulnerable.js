function renderProfile(container, profile) {
  container.innerHTML = "<h2>" + profile.displayName + "</h2><p>" + profile.bio + "</p>";
}
