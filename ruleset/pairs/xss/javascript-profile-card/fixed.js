function renderProfile(container, profile) {
  const title = document.createElement("h2");
  title.textContent = profile.displayName;
  const bio = document.createElement("p");
  bio.textContent = profile.bio;
  container.replaceChildren(title, bio);
}
